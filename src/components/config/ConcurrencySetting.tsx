import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, Input } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { INPUT_WIDTH, LABEL_WIDTH } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

/** The most concurrent Prometheus requests the backend accepts (pkg/models/settings.go parseConcurrency). */
export const MAX_CONCURRENT_QUERIES = 100;

/** The error for maxConcurrentQueries, mirroring the backend: a whole number from 1 to 100. */
export function concurrencyError(value: number | undefined): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (!Number.isInteger(value) || value < 1 || value > MAX_CONCURRENT_QUERIES) {
    return `Use a whole number from 1 to ${MAX_CONCURRENT_QUERIES}`;
  }
  return undefined;
}

/**
 * How many requests this data source sends Prometheus at once; the rest queue in the plugin. Empty uses the
 * default, which stays below Prometheus' own --query.max-concurrency of 20.
 */
export function ConcurrencySetting({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const error = concurrencyError(jsonData.maxConcurrentQueries);
  const onChange = (event: ChangeEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value.trim();
    const next = { ...jsonData };
    if (text === '') {
      delete next.maxConcurrentQueries;
    } else {
      next.maxConcurrentQueries = Number(text);
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <InlineField
      label="Max concurrent queries"
      labelWidth={LABEL_WIDTH}
      tooltip="Most requests this data source sends Prometheus at once, shared by every dashboard and viewer; the rest wait in the plugin within their own deadline. Keep it below Prometheus' --query.max-concurrency (default 20)."
      invalid={Boolean(error)}
      error={error}
    >
      <Input
        id="vllm-max-concurrent-queries"
        type="number"
        width={INPUT_WIDTH}
        value={jsonData.maxConcurrentQueries ?? ''}
        placeholder={String(DEFAULT_SETTINGS.maxConcurrentQueries)}
        onChange={onChange}
      />
    </InlineField>
  );
}
