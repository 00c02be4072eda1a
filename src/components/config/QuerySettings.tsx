import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection, ConfigSubSection } from '@grafana/plugin-ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { isValidDuration } from '../../validation';
import { ConcurrencySetting } from './ConcurrencySetting';
import { IncrementalSetting } from './IncrementalSetting';
import { RulesSetting } from './RulesSetting';
import { TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

const DURATION_ERROR = 'Use a duration such as 15s, 1m or 1m30s';

/** True when a tuning setting is saved, so its sub-section opens and shows it. */
function hasTuning(jsonData: VllmDataSourceOptions): boolean {
  return (
    jsonData.maxConcurrentQueries !== undefined ||
    jsonData.incrementalQuerying !== undefined ||
    jsonData.incrementalQueryOverlapWindow !== undefined ||
    jsonData.recordingRules !== undefined ||
    jsonData.rulePrefix !== undefined
  );
}

/**
 * How queries are sent: the scrape interval (steps and rate windows) and the timeout, then the load this data
 * source puts on Prometheus (concurrency, incremental querying), collapsed while at their defaults.
 */
export function QuerySettings({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const setDuration = (key: 'scrapeInterval' | 'queryTimeout') => (event: React.ChangeEvent<HTMLInputElement>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, [key]: event.currentTarget.value.trim() } });

  return (
    <ConfigSection title="Queries and performance">
      <TextSettingField
        label="Scrape interval"
        tooltip="Prometheus' scrape interval for the vLLM targets; used for step and rate windows."
        id="vllm-scrape-interval"
        value={jsonData.scrapeInterval}
        placeholder={DEFAULT_SETTINGS.scrapeInterval}
        onChange={setDuration('scrapeInterval')}
        error={isValidDuration(jsonData.scrapeInterval) ? undefined : DURATION_ERROR}
      />
      <TextSettingField
        label="Query timeout"
        tooltip="Upper bound for each request to Prometheus."
        id="vllm-query-timeout"
        value={jsonData.queryTimeout}
        placeholder={DEFAULT_SETTINGS.queryTimeout}
        onChange={setDuration('queryTimeout')}
        error={isValidDuration(jsonData.queryTimeout) ? undefined : DURATION_ERROR}
      />
      <ConfigSubSection
        title="Load on Prometheus"
        description="Concurrency, incremental querying and recording rules; the defaults suit most fleets."
        isCollapsible
        isInitiallyOpen={hasTuning(jsonData)}
      >
        <ConcurrencySetting options={options} onOptionsChange={onOptionsChange} />
        <IncrementalSetting options={options} onOptionsChange={onOptionsChange} />
        <RulesSetting options={options} onOptionsChange={onOptionsChange} />
      </ConfigSubSection>
    </ConfigSection>
  );
}
