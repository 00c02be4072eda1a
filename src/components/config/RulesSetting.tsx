import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, RadioButtonGroup } from '@grafana/ui';

import { VllmDataSourceOptions, VllmRulesPolicy, VllmSecureJsonData } from '../../types';
import { LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

const PREFIX_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

const POLICY_OPTIONS: Array<{ label: string; value: VllmRulesPolicy; description: string }> = [
  { label: 'Exact', value: 'exact', description: 'Only where the recorded series give the raw answer (the default)' },
  {
    label: 'Nearest',
    value: 'nearest',
    description:
      'Also where they answer closely: the recorded rate window (1m, 5m) nearest the query’s, within 2.5×, and any step of at least one evaluation interval; a notice says so',
  },
  { label: 'Off', value: 'off', description: 'Always query raw series' },
];

/**
 * The policy jsonData.recordingRules holds: its name, or the boolean earlier versions wrote (true is exact, false
 * off); absent is exact, as the backend reads it (pkg/models/rules.go).
 */
export function rulesPolicy(value: VllmRulesPolicy | boolean | undefined): VllmRulesPolicy {
  if (value === false || value === 'off') {
    return 'off';
  }
  return value === 'nearest' ? 'nearest' : 'exact';
}

/**
 * Recording rules: exact unless set, so queries read the shipped rules' series where they answer exactly; nearest
 * also takes close answers; the name prefix is shown unless off.
 */
export function RulesSetting({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const policy = rulesPolicy(jsonData.recordingRules);
  const prefix = jsonData.rulePrefix;
  const onPolicy = (recordingRules: VllmRulesPolicy) => {
    onOptionsChange({ ...options, jsonData: { ...jsonData, recordingRules } });
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
        tooltip="Read the series of the plugin's recording rules (deploy/prometheus/rules/vllm-recording.rules.yml) instead of evaluating raw histograms every time: where they answer a query exactly (Exact), or also where they answer it closely (Nearest). Used only when found; Save & test says whether they are."
      >
        <RadioButtonGroup options={POLICY_OPTIONS} value={policy} onChange={onPolicy} />
      </InlineField>
      {policy !== 'off' && (
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
