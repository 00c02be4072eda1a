import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, InlineSwitch } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { isValidDuration } from '../../validation';
import { LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

/**
 * Incremental querying (the names and default of Grafana's own Prometheus data source): a refreshed range asks
 * Prometheus only for the steps after the earlier answer's moment minus the overlap window. On unless switched off,
 * so the switch reads an absent value as on; the overlap is shown only while it is on.
 */
export function IncrementalSetting({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const on = jsonData.incrementalQuerying !== false;
  const overlap = jsonData.incrementalQueryOverlapWindow;
  const onToggle = (event: React.FormEvent<HTMLInputElement>) => {
    onOptionsChange({ ...options, jsonData: { ...jsonData, incrementalQuerying: event.currentTarget.checked } });
  };
  const onOverlap = (event: ChangeEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value.trim();
    const next = { ...jsonData };
    if (text === '') {
      delete next.incrementalQueryOverlapWindow;
    } else {
      next.incrementalQueryOverlapWindow = text;
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <>
      <InlineField
        label="Incremental querying"
        labelWidth={LABEL_WIDTH}
        tooltip="A dashboard refreshed over a range ending now asks Prometheus only for the new steps and those within the overlap window; earlier steps come from the last answer. Alert rules always get a full query."
      >
        <InlineSwitch id="vllm-incremental-querying" value={on} onChange={onToggle} />
      </InlineField>
      {on && (
        <TextSettingField
          label="Query overlap window"
          tooltip="How far back from each query its steps are asked for again, because samples arrive late (a scrape late, longer through remote write). At least two scrape intervals."
          id="vllm-incremental-overlap"
          value={overlap}
          placeholder={DEFAULT_SETTINGS.incrementalQueryOverlapWindow}
          onChange={onOverlap}
          error={isValidDuration(overlap) ? undefined : 'Use a duration such as 10m or 1h'}
        />
      )}
    </>
  );
}
