import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps, DataSourceSettings } from '@grafana/data';
import { DataSourceHttpSettings, FieldSet, InlineField, Input, SecretInput } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../types';
import { isValidDuration, isValidLabelName, isValidMetricPrefix } from '../validation';

type Props = DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>;
type Settings = DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData>;

/** jsonData keys the "vLLM" section edits with a plain text input. */
type TextSetting = 'scrapeInterval' | 'queryTimeout' | 'instanceLabel' | 'metricPrefix';

const LABEL_WIDTH = 20;
const INPUT_WIDTH = 40;

/**
 * Data-source settings page: the Prometheus connection (URL, auth, TLS, headers) through Grafana's standard HTTP
 * settings, then the vLLM-specific options and the node-agent token.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const { jsonData, secureJsonFields, secureJsonData } = options;

  // DataSourceHttpSettings writes options.url (plus basicAuth, jsonData TLS/header fields and their secrets).
  // Mirror the URL into jsonData.prometheusUrl so the backend's fallback and provisioned files stay consistent.
  const onHttpSettingsChange = (next: Settings) => {
    onOptionsChange({ ...next, jsonData: { ...next.jsonData, prometheusUrl: next.url } });
  };

  const onTextSettingChange = (key: TextSetting) => (event: ChangeEvent<HTMLInputElement>) => {
    onOptionsChange({ ...options, jsonData: { ...jsonData, [key]: event.currentTarget.value.trim() } });
  };

  // The token goes to secureJsonData only: Grafana encrypts it and never sends it back to the browser.
  const onAgentTokenChange = (event: ChangeEvent<HTMLInputElement>) => {
    onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, agentToken: event.currentTarget.value } });
  };

  // "Reset" on a saved secret: mark it as not configured and send an empty value, which makes Grafana delete it.
  const onAgentTokenReset = () => {
    onOptionsChange({
      ...options,
      secureJsonFields: { ...secureJsonFields, agentToken: false },
      secureJsonData: { ...secureJsonData, agentToken: '' },
    });
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
          tooltip="Label that identifies one vLLM server, e.g. instance or pod on Kubernetes."
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
          tooltip="Prefix of every vLLM metric: vllm: for vLLM, ray_vllm: behind Ray Serve."
          id="vllm-metric-prefix"
          value={jsonData.metricPrefix}
          placeholder={DEFAULT_SETTINGS.metricPrefix}
          onChange={onTextSettingChange('metricPrefix')}
          error={
            isValidMetricPrefix(jsonData.metricPrefix) ? undefined : "Only letters, digits, '_' and ':' (e.g. vllm:)"
          }
        />
        <InlineField
          label="Node agent token"
          labelWidth={LABEL_WIDTH}
          interactive
          tooltip="Shared secret the node agents present to this data source. Stored encrypted, never shown again."
        >
          <SecretInput
            id="vllm-agent-token"
            width={INPUT_WIDTH}
            placeholder="Token for node agents (optional)"
            isConfigured={Boolean(secureJsonFields?.agentToken)}
            value={secureJsonData?.agentToken ?? ''}
            onChange={onAgentTokenChange}
            onReset={onAgentTokenReset}
          />
        </InlineField>
      </FieldSet>
    </>
  );
}

interface TextSettingFieldProps {
  label: string;
  tooltip: string;
  id: string;
  value: string | undefined;
  placeholder: string;
  onChange: (event: ChangeEvent<HTMLInputElement>) => void;
  /** Shown under the field; the value is still saved, the backend's "Save & test" has the last word. */
  error?: string;
}

/** One labelled text input; the placeholder shows the default the backend uses when the field is empty. */
function TextSettingField({ label, tooltip, id, value, placeholder, onChange, error }: TextSettingFieldProps) {
  return (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip} invalid={Boolean(error)} error={error}>
      <Input id={id} width={INPUT_WIDTH} value={value ?? ''} placeholder={placeholder} onChange={onChange} />
    </InlineField>
  );
}
