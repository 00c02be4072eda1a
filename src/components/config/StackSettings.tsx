import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection, ConfigSubSection } from '@grafana/plugin-ui';
import { InlineField, RadioButtonGroup } from '@grafana/ui';

import { DEFAULT_SETTINGS, PROFILE_OPTIONS, VllmDataSourceOptions, VllmProfile, VllmSecureJsonData } from '../../types';
import { isValidLabelName, isValidMetricPrefix, matchersError } from '../../validation';
import { LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

/** What an absent jsonData.profile means to the backend: detect the stack. */
export const DEFAULT_PROFILE: VllmProfile = 'auto';

/** jsonData keys of this section that are plain text inputs. */
type StackText = 'selector' | 'instanceLabel' | 'metricPrefix' | 'roleLabel';

/**
 * The vLLM stack: which series are vLLM's and how one server is named. The profile and the selector come first
 * because they decide whether anything is found at all; the overrides of the profile's label and prefix are
 * rarely needed and start collapsed unless one is set.
 */
export function StackSettings({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const setText = (key: StackText) => (event: React.ChangeEvent<HTMLInputElement>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, [key]: event.currentTarget.value.trim() } });
  const hasOverrides = Boolean(jsonData.instanceLabel || jsonData.metricPrefix || jsonData.roleLabel);

  return (
    <ConfigSection
      title="vLLM stack"
      description="How your serving stack labels vLLM's series, and which of them belong to this data source."
    >
      <InlineField
        label="Stack profile"
        labelWidth={LABEL_WIDTH}
        tooltip="How your serving stack labels vLLM's series: the metric prefixes, the labels that identify one server (namespace/pod on Kubernetes) and series to leave out (production-stack's router). Auto applies the stack detected from the series; any other choice wins over detection. Save & test names the stack it sees."
      >
        <RadioButtonGroup
          options={PROFILE_OPTIONS}
          value={jsonData.profile ?? DEFAULT_PROFILE}
          onChange={(profile: VllmProfile) => onOptionsChange({ ...options, jsonData: { ...jsonData, profile } })}
        />
      </InlineField>
      <TextSettingField
        label="Selector"
        tooltip='Scopes this data source to one fleet in a shared Prometheus, Thanos or VictoriaMetrics: label matchers added to every query, the health check and the pickers (agent discovery keeps only cluster-wide ones such as cluster), e.g. cluster="eu-1", namespace="inference". Empty: every vLLM series.'
        id="vllm-selector"
        value={jsonData.selector}
        placeholder='cluster="eu-1"'
        onChange={setText('selector')}
        error={matchersError(jsonData.selector)}
      />
      <ConfigSubSection
        title="Profile overrides"
        description="Only when your series differ from the profile's: an explicit value wins over every profile, detected ones included."
        isCollapsible
        isInitiallyOpen={hasOverrides}
      >
        <TextSettingField
          label="Instance label"
          tooltip="Label that identifies one vLLM server, e.g. instance. Empty: the profile's (namespace and pod on Kubernetes)."
          id="vllm-instance-label"
          value={jsonData.instanceLabel}
          placeholder={DEFAULT_SETTINGS.instanceLabel}
          onChange={setText('instanceLabel')}
          error={
            isValidLabelName(jsonData.instanceLabel) ? undefined : 'Use a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*'
          }
        />
        <TextSettingField
          label="Metric prefix"
          tooltip="Prefix of every vLLM metric: vllm: for vLLM, ray_vllm: behind Ray Serve. Empty: the profile's (Ray Serve accepts ray_vllm: and ray_vllm_, KServe kserve_vllm: and vllm:)."
          id="vllm-metric-prefix"
          value={jsonData.metricPrefix}
          placeholder={DEFAULT_SETTINGS.metricPrefix}
          onChange={setText('metricPrefix')}
          error={
            isValidMetricPrefix(jsonData.metricPrefix) ? undefined : "Only letters, digits, '_' and ':' (e.g. vllm:)"
          }
        />
        <TextSettingField
          label="Role label"
          tooltip="Label holding each engine's prefill/decode role (disaggregated serving), for the Role grouping, the fleet table's role column and KV transfer. Empty: llm_isvc_role (KServe) or llm_d_ai_role (llm-d's pod label llm-d.ai/role, when the scrape copies pod labels)."
          id="vllm-role-label"
          value={jsonData.roleLabel}
          placeholder="llm_isvc_role"
          onChange={setText('roleLabel')}
          error={
            isValidLabelName(jsonData.roleLabel) ? undefined : 'Use a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*'
          }
        />
      </ConfigSubSection>
    </ConfigSection>
  );
}
