import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, InlineSwitch } from '@grafana/ui';

import { VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

const PREFIX_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * Recording rules: on unless switched off (an absent value reads as on), so queries read the shipped rules' series
 * where they answer exactly; the name prefix is shown only while on.
 */
export function RulesSetting({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const on = jsonData.recordingRules !== false;
  const prefix = jsonData.rulePrefix;
  const onToggle = (event: React.FormEvent<HTMLInputElement>) => {
    onOptionsChange({ ...options, jsonData: { ...jsonData, recordingRules: event.currentTarget.checked } });
  };
  const onPrefix = (event: ChangeEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value.trim();
    const next = { ...jsonData };
    if (text === '') {
      delete next.rulePrefix;
    } else {
      next.rulePrefix = text;
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <>
      <InlineField
        label="Recording rules"
        labelWidth={LABEL_WIDTH}
        tooltip="Read the series of the plugin's recording rules (deploy/prometheus/rules/vllm-recording.rules.yml) where they answer a query exactly, instead of evaluating raw histograms every time. Used only when found; Save & test says whether they are."
      >
        <InlineSwitch id="vllm-recording-rules" value={on} onChange={onToggle} />
      </InlineField>
      {on && (
        <TextSettingField
          label="Rule name prefix"
          tooltip="The prefix of the recorded series' names; change it only if you renamed the rules when loading them."
          id="vllm-rule-prefix"
          value={prefix}
          placeholder="engine:"
          onChange={onPrefix}
          error={
            prefix === undefined || prefix === '' || PREFIX_RE.test(prefix)
              ? undefined
              : "Letters, digits, '_' and ':' only, e.g. engine:"
          }
        />
      )}
    </>
  );
}
