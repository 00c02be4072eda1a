import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection } from '@grafana/plugin-ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

type CostKey = 'gpusPerServer' | 'gpuHourlyCost';

/** The message for a GPU count, or undefined when it is valid or empty (the backend checks the same bounds). */
export function gpusError(value: number | undefined): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  return Number.isInteger(value) && value >= 1 && value <= 1024 ? undefined : 'A whole number of GPUs, 1 to 1024';
}

/** The message for a GPU price, or undefined when it is valid or empty. */
export function costError(value: number | undefined): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  return Number.isFinite(value) && value >= 0 && value <= 10000 ? undefined : 'A price per GPU-hour, 0 to 10000';
}

/**
 * What the fleet's GPUs are and cost: the capacity query's efficiency columns (GPU-seconds per million tokens,
 * tokens/s per GPU, idle share) count gpusPerServer GPUs per server, and price them at gpuHourlyCost.
 */
export function CostSettings({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const [text, setText] = React.useState<Record<CostKey, string | undefined>>({
    gpusPerServer: jsonData.gpusPerServer?.toString(),
    gpuHourlyCost: jsonData.gpuHourlyCost?.toString(),
  });
  const onChange = (key: CostKey) => (event: ChangeEvent<HTMLInputElement>) => {
    const raw = event.currentTarget.value.trim();
    setText({ ...text, [key]: raw });
    const next = { ...jsonData };
    if (raw === '') {
      delete next[key];
    } else {
      next[key] = Number(raw);
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <ConfigSection title="GPUs and cost" description="For the capacity query's efficiency and cost columns.">
      <TextSettingField
        label="GPUs per server"
        tooltip="GPUs one vLLM server holds: its tensor × pipeline parallel size."
        id="vllm-gpus-per-server"
        value={text.gpusPerServer}
        placeholder={String(DEFAULT_SETTINGS.gpusPerServer)}
        onChange={onChange('gpusPerServer')}
        error={gpusError(jsonData.gpusPerServer)}
      />
      <TextSettingField
        label="GPU hourly cost"
        tooltip="What one GPU costs an hour, in your currency; empty leaves the cost columns out."
        id="vllm-gpu-hourly-cost"
        value={text.gpuHourlyCost}
        placeholder="not priced"
        onChange={onChange('gpuHourlyCost')}
        error={costError(jsonData.gpuHourlyCost)}
      />
    </ConfigSection>
  );
}
