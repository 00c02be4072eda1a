import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, RadioButtonGroup, SecretInput, TagsInput, Text, useTheme2 } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmAgentMode, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { isValidAgentTimeout, isValidAgentUrl, matchersError } from '../../validation';
import { INPUT_WIDTH, LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>;

const MODE_OPTIONS: Array<{ value: VllmAgentMode; label: string; description: string }> = [
  { value: 'static', label: 'Static list', description: 'Agent URLs listed here' },
  { value: 'discovery', label: 'Prometheus discovery', description: 'The targets of a Prometheus scrape job' },
];

/** True when any node-agent setting is saved, so the section opens and shows it. */
export function hasAgentSettings({ jsonData, secureJsonFields }: Props['options']): boolean {
  const keys = ['agentMode', 'agentUrls', 'agentJob', 'agentSelector', 'agentTimeout'] as const;
  return keys.some((k) => jsonData[k] !== undefined) || Boolean(secureJsonFields?.agentToken);
}

/**
 * Node agents report per-GPU numbers. They are found either from a static URL list or from the targets Prometheus
 * already scrapes for the agents' job. The backend decides by the list alone (non-empty: static, else discovery),
 * so choosing discovery clears the list; otherwise a forgotten list would silently win over the job.
 */
export function AgentSettings({ options, onOptionsChange }: Props) {
  const { jsonData, secureJsonFields, secureJsonData } = options;
  const theme = useTheme2();
  const urls = jsonData.agentUrls ?? [];
  const mode: VllmAgentMode = jsonData.agentMode ?? (urls.length > 0 ? 'static' : 'discovery');
  const setJson = (patch: Partial<VllmDataSourceOptions>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });
  const onModeChange = (agentMode: VllmAgentMode) =>
    setJson(agentMode === 'discovery' ? { agentMode, agentUrls: undefined } : { agentMode });

  const badUrls = urls.filter((u) => !isValidAgentUrl(u));
  const urlError = badUrls.length
    ? `Not an http(s) URL with a host (and no credentials): ${badUrls.join(', ')}`
    : undefined;

  // The token goes to secureJsonData only: Grafana encrypts it and never sends it back to the browser.
  const onTokenChange = (event: ChangeEvent<HTMLInputElement>) =>
    onOptionsChange({ ...options, secureJsonData: { ...secureJsonData, agentToken: event.currentTarget.value } });

  // "Reset" on a saved secret: mark it as not configured and send an empty value, which makes Grafana delete it.
  const onTokenReset = () =>
    onOptionsChange({
      ...options,
      secureJsonFields: { ...secureJsonFields, agentToken: false },
      secureJsonData: { ...secureJsonData, agentToken: '' },
    });

  return (
    <ConfigSection
      title="Node agents"
      description="Per-GPU numbers (the GPU query) come from the optional node agents, not from Prometheus."
      isCollapsible
      isInitiallyOpen={hasAgentSettings(options)}
    >
      <InlineField label="Find agents by" labelWidth={LABEL_WIDTH}>
        <RadioButtonGroup options={MODE_OPTIONS} value={mode} onChange={onModeChange} />
      </InlineField>
      {mode === 'static' && (
        <InlineField
          label="Agent URLs"
          labelWidth={LABEL_WIDTH}
          tooltip="Base URL of each node agent, e.g. http://gpu-node-1:9400. Press Enter after each."
          invalid={Boolean(urlError)}
          error={urlError}
        >
          <TagsInput
            id="vllm-agent-urls"
            width={INPUT_WIDTH}
            placeholder="http://gpu-node-1:9400, Enter to add"
            tags={urls}
            onChange={(tags) => setJson({ agentUrls: tags.map((t) => t.trim()).filter((t) => t !== '') })}
            addOnBlur
            invalid={Boolean(urlError)}
            autoColors={false}
          />
        </InlineField>
      )}
      {mode === 'static' && urls.length === 0 && (
        // Say what the backend does with an empty list, so "static, no URLs" is not mistaken for "no agents".
        <div style={{ marginLeft: theme.spacing(LABEL_WIDTH), marginBottom: theme.spacing(1) }}>
          <Text variant="bodySmall" color="secondary">
            Until a URL is added, agents are discovered from the Prometheus job{' '}
            {jsonData.agentJob || DEFAULT_SETTINGS.agentJob}.
          </Text>
        </div>
      )}
      {mode === 'discovery' && (
        <TextSettingField
          label="Prometheus job"
          tooltip="The job label of the scrape job that scrapes the node agents; its targets are the agents."
          id="vllm-agent-job"
          value={jsonData.agentJob}
          placeholder={DEFAULT_SETTINGS.agentJob}
          onChange={(event) => setJson({ agentJob: event.currentTarget.value.trim() })}
        />
      )}
      {mode === 'discovery' && (
        // Not the fleet's selector: the agents' targets carry their own namespace and pods (a DaemonSet in
        // monitoring), so by default only the selector's cluster-wide matchers scope them. Blank is unset.
        <TextSettingField
          label="Agent selector"
          tooltip={`Label matchers for the agents' targets, e.g. cluster="eu-1"; {} for none. Empty: the selector without its namespace, pod and other per-pod matchers.`}
          id="vllm-agent-selector"
          value={jsonData.agentSelector}
          placeholder='cluster="eu-1"'
          onChange={(event) => setJson({ agentSelector: event.currentTarget.value.trim() || undefined })}
          error={matchersError(jsonData.agentSelector)}
        />
      )}
      <TextSettingField
        label="Agent timeout"
        tooltip="Upper bound for each request to a node agent, at most 1m."
        id="vllm-agent-timeout"
        value={jsonData.agentTimeout}
        placeholder={DEFAULT_SETTINGS.agentTimeout}
        onChange={(event) => setJson({ agentTimeout: event.currentTarget.value.trim() })}
        error={isValidAgentTimeout(jsonData.agentTimeout) ? undefined : 'Use a duration up to 1m, such as 2s or 500ms'}
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
          onChange={onTokenChange}
          onReset={onTokenReset}
        />
      </InlineField>
    </ConfigSection>
  );
}
