import React, { ChangeEvent } from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, Input } from '@grafana/ui';

import { DEFAULT_SETTINGS, VllmDataSourceOptions, VllmSecureJsonData } from '../../types';
import { goDurationMs, isValidDuration } from '../../validation';
import { INPUT_WIDTH, LABEL_WIDTH, TextSettingField } from './TextSettingField';

type Props = Pick<
  DataSourcePluginOptionsEditorProps<VllmDataSourceOptions, VllmSecureJsonData>,
  'options' | 'onOptionsChange'
>;

type Threshold = 'saturationKvHigh' | 'saturationQueue' | 'saturationPreemptions' | 'saturationIdle';

/** Each threshold with its label, help and the range the backend accepts (pkg/models/saturation.go). */
const THRESHOLDS: Array<{ key: Threshold; label: string; tooltip: string; max?: number }> = [
  {
    key: 'saturationKvHigh',
    label: 'KV cache near full',
    tooltip: 'KV-cache usage (0 to 1) at or above which, with preemptions, an instance is KV-bound.',
    max: 1,
  },
  {
    key: 'saturationQueue',
    label: 'Queue',
    tooltip: 'Mean waiting requests over the rate window from which an instance is queueing.',
  },
  {
    key: 'saturationPreemptions',
    label: 'Preemptions/s',
    tooltip: 'Preemptions per second from which a near-full KV cache counts as preempting.',
  },
  {
    key: 'saturationIdle',
    label: 'Idle below',
    tooltip: 'Share (0 to 1) of the highest batch the instance reached: running below it with no queue is idle.',
    max: 1,
  },
];

/** The error for a threshold value, mirroring the backend: more than 0 and at most max. */
export function thresholdError(value: number | undefined, max?: number): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  if (!Number.isFinite(value) || value <= 0 || (max !== undefined && value > max)) {
    return max !== undefined ? `Use a number above 0 and at most ${max}` : 'Use a number above 0';
  }
  return undefined;
}

/**
 * The error for a stall window, mirroring the backend (pkg/models/settings.go): a positive duration, and at least
 * two scrape intervals (a counter needs two samples in the window to show progress). The bound is checked only when
 * both durations are plain Go durations; the backend's "Save & test" has the last word either way.
 */
export function stallWindowError(value: string | undefined, scrapeInterval: string | undefined): string | undefined {
  if (!isValidDuration(value)) {
    return 'Use a duration such as 3m or 5m';
  }
  const stall = goDurationMs(value ?? '');
  const scrape = (scrapeInterval ?? '').trim() || DEFAULT_SETTINGS.scrapeInterval;
  const scrapeMs = goDurationMs(scrape);
  if (stall !== undefined && scrapeMs !== undefined && stall < 2 * scrapeMs) {
    return `Use at least two scrape intervals (2 × ${scrape})`;
  }
  return undefined;
}

/** True when a setting of this section is saved, so the section opens and shows it. */
function hasDiagnosisSetting(jsonData: VllmDataSourceOptions): boolean {
  return jsonData.stallWindow !== undefined || THRESHOLDS.some(({ key }) => jsonData[key] !== undefined);
}

/**
 * The thresholds of the saturation query's verdicts (KV-bound, queueing, preempting, idle) and the stall window of
 * its stalled verdict; empty fields use the defaults shown as placeholders. Collapsed unless one is set: the defaults suit most fleets.
 */
export function SaturationSettings({ options, onOptionsChange }: Props) {
  const { jsonData } = options;
  const onChange = (key: Threshold) => (event: ChangeEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value.trim();
    const next = { ...jsonData };
    if (text === '') {
      delete next[key];
    } else {
      next[key] = Number(text);
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  const onStallWindow = (event: ChangeEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value.trim();
    const next = { ...jsonData };
    if (text === '') {
      delete next.stallWindow;
    } else {
      next.stallWindow = text;
    }
    onOptionsChange({ ...options, jsonData: next });
  };
  return (
    <ConfigSection
      title="Diagnosis thresholds"
      description="When the saturation query calls an instance KV-bound, queueing, preempting, idle or stalled."
      isCollapsible
      isInitiallyOpen={hasDiagnosisSetting(jsonData)}
    >
      {THRESHOLDS.map(({ key, label, tooltip, max }) => {
        const error = thresholdError(jsonData[key], max);
        return (
          <InlineField
            key={key}
            label={label}
            labelWidth={LABEL_WIDTH}
            tooltip={tooltip}
            invalid={Boolean(error)}
            error={error}
          >
            <Input
              id={`vllm-${key}`}
              type="number"
              width={INPUT_WIDTH}
              value={jsonData[key] ?? ''}
              placeholder={String(DEFAULT_SETTINGS[key])}
              onChange={onChange(key)}
            />
          </InlineField>
        );
      })}
      <TextSettingField
        label="Stall window"
        tooltip="An engine that is up, has requests running or waiting throughout this window and whose token and finished-request counters did not move over it is stalled (verdict: restart or drain). At least two scrape intervals; empty uses 3m, or two scrape intervals when that is longer."
        id="vllm-stall-window"
        value={jsonData.stallWindow}
        placeholder={DEFAULT_SETTINGS.stallWindow}
        onChange={onStallWindow}
        error={stallWindowError(jsonData.stallWindow, jsonData.scrapeInterval)}
      />
    </ConfigSection>
  );
}
