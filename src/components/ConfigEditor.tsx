import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps, DataSourceSettings } from '@grafana/data';
import { DataSourceHttpSettings, FieldSet, InlineField, RadioButtonGroup } from '@grafana/ui';

import { DEFAULT_SETTINGS, PROFILE_OPTIONS, VllmDataSourceOptions, VllmProfile, VllmSecureJsonData } from '../types';
import { isValidDuration, isValidLabelName, isValidMetricPrefix, matchersError } from '../validation';
import { AgentSettings } from './config/AgentSettings';
import { ConcurrencySetting } from './config/ConcurrencySetting';
import { IncrementalSetting } from './config/IncrementalSetting';
import { SaturationSettings } from './config/SaturationSettings';
import { LABEL_WIDTH, TextSettingField } from './config/TextSettingField';

type Props = DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>;
type Settings = DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData>;

/** jsonData keys the "vLLM" section edits with a plain text input. */
type TextSetting = 'scrapeInterval' | 'queryTimeout' | 'instanceLabel' | 'metricPrefix' | 'selector';

/**
 * Data-source settings page: the Prometheus connection (URL, auth, TLS, headers) through Grafana's standard HTTP
 * settings, then the vLLM-specific options and the node agents (GPU numbers).
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const { jsonData } = options;

  // DataSourceHttpSettings writes options.url (plus basicAuth, jsonData TLS/header fields and their secrets).
  // Mirror the URL into jsonData.prometheusUrl so the backend's fallback and provisioned files stay consistent.
  const onHttpSettingsChange = (next: Settings) => {
    onOptionsChange({ ...next, jsonData: { ...next.jsonData, prometheusUrl: next.url } });
  };

  const onTextSettingChange = (key: TextSetting) => (event: ChangeEvent<HTMLInputElement>) => {
    onOptionsChange({ ...options, jsonData: { ...jsonData, [key]: event.currentTarget.value.trim() } });
  };

  const durationError = 'Use a duration such as 15s, 1m or 1m30s';

  return (
    <>
      {/* Deprecated in favour of @grafana/plugin-ui's auth components, but plugin-ui needs Grafana 13 peers
          while this plugin builds against @grafana/* 12.4 (see package.json); this component ships with 12.x. */}
      {/* eslint-disable-next-line @typescript-eslint/no-deprecated */}
      <DataSourceHttpSettings
        defaultUrl={DEFAULT_SETTINGS.prometheusUrl}
        urlLabel="Prometheus URL"
        dataSourceConfig={options}
        onChange={onHttpSettingsChange}
        showAccessOptions={false}
      />

      <FieldSet label="vLLM">
        <InlineField
          label="Stack profile"
          labelWidth={LABEL_WIDTH}
          tooltip="How your serving stack labels vLLM's series: the metric prefixes, the labels that identify one server (namespace/pod on Kubernetes) and series to leave out (production-stack's router). Save & test names the stack it sees."
        >
          <RadioButtonGroup
            options={PROFILE_OPTIONS}
            value={jsonData.profile ?? 'prometheus'}
            onChange={(profile: VllmProfile) => onOptionsChange({ ...options, jsonData: { ...jsonData, profile } })}
          />
        </InlineField>
        <TextSettingField
          label="Scrape interval"
          tooltip="Prometheus' scrape interval for the vLLM targets; used for step and rate windows."
          id="vllm-scrape-interval"
          value={jsonData.scrapeInterval}
          placeholder={DEFAULT_SETTINGS.scrapeInterval}
          onChange={onTextSettingChange('scrapeInterval')}
          error={isValidDuration(jsonData.scrapeInterval) ? undefined : durationError}
        />
        <TextSettingField
          label="Query timeout"
          tooltip="Upper bound for each request to Prometheus."
          id="vllm-query-timeout"
          value={jsonData.queryTimeout}
          placeholder={DEFAULT_SETTINGS.queryTimeout}
          onChange={onTextSettingChange('queryTimeout')}
          error={isValidDuration(jsonData.queryTimeout) ? undefined : durationError}
        />
        <TextSettingField
          label="Instance label"
          tooltip="Label that identifies one vLLM server, e.g. instance. Empty: the profile's (namespace and pod on Kubernetes)."
          id="vllm-instance-label"
          value={jsonData.instanceLabel}
          placeholder={DEFAULT_SETTINGS.instanceLabel}
          onChange={onTextSettingChange('instanceLabel')}
          error={
            isValidLabelName(jsonData.instanceLabel) ? undefined : 'Use a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*'
          }
        />
        <TextSettingField
          label="Metric prefix"
          tooltip="Prefix of every vLLM metric: vllm: for vLLM, ray_vllm: behind Ray Serve. Empty: the profile's (Ray Serve accepts ray_vllm: and ray_vllm_)."
          id="vllm-metric-prefix"
          value={jsonData.metricPrefix}
          placeholder={DEFAULT_SETTINGS.metricPrefix}
          onChange={onTextSettingChange('metricPrefix')}
          error={
            isValidMetricPrefix(jsonData.metricPrefix) ? undefined : "Only letters, digits, '_' and ':' (e.g. vllm:)"
          }
        />
        <TextSettingField
          label="Selector"
          tooltip='Scopes this data source to one fleet in a shared Prometheus, Thanos or VictoriaMetrics: label matchers added to every query, the health check, the pickers and agent discovery, e.g. cluster="eu-1", namespace="inference". Empty: every vLLM series.'
          id="vllm-selector"
          value={jsonData.selector}
          placeholder='cluster="eu-1"'
          onChange={onTextSettingChange('selector')}
          error={matchersError(jsonData.selector)}
        />
        <ConcurrencySetting options={options} onOptionsChange={onOptionsChange} />
        <IncrementalSetting options={options} onOptionsChange={onOptionsChange} />
      </FieldSet>

      <AgentSettings options={options} onOptionsChange={onOptionsChange} />

      <SaturationSettings options={options} onOptionsChange={onOptionsChange} />
    </>
  );
}
