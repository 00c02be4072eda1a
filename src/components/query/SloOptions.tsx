import React from 'react';
import { InlineField, InlineFieldRow, MultiCombobox, Text } from '@grafana/ui';

import {
  DEFAULT_SLO_FAMILY,
  DEFAULT_SLO_TARGET,
  DEFAULT_SLO_THRESHOLD,
  DEFAULT_SLO_WINDOW,
  SLO_FAMILY_OPTIONS,
  SLO_SIGNAL_OPTIONS,
  parseNumber,
  snapHint,
} from '../../sloOptions';
import { VllmSloSignal } from '../../types';
import { ChoiceField } from './ChoiceField';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

/**
 * SLO: the objective (latency histogram, threshold, target, window) and which of its series to return. Every field
 * may stay empty: the backend's defaults (99% of TTFT within 1 s over 28 days) show data at once.
 */
export function SloOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  const hint = snapHint(query);
  return (
    <>
      <InlineFieldRow>
        <ChoiceField
          label="Latency"
          id="vllm-slo-family"
          tooltip="The latency histogram the objective is set on."
          value={query.family}
          defaultValue={DEFAULT_SLO_FAMILY}
          options={SLO_FAMILY_OPTIONS}
          variableRefs={variableRefs}
          error={errors.family}
          onChange={(family) => onChange({ family: family as OptionsProps['query']['family'] })}
        />
        <InlineField
          label="Threshold (s)"
          labelWidth={14}
          tooltip="Requests at or under this many seconds are good. A histogram only counts up to its bucket bounds, so the nearest bound is used (the query says which)."
          invalid={Boolean(errors.threshold)}
          error={errors.threshold}
        >
          <CommitInput
            id="vllm-slo-threshold"
            width={10}
            value={query.threshold === undefined ? '' : String(query.threshold)}
            placeholder={String(DEFAULT_SLO_THRESHOLD)}
            invalid={Boolean(errors.threshold)}
            onCommit={(text) => onChange({ threshold: parseNumber(text) })}
          />
        </InlineField>
        <InlineField
          label="Target"
          labelWidth={10}
          tooltip="Share of requests that must be good, between 0 and 1: 0.99 for 99%."
          invalid={Boolean(errors.target)}
          error={errors.target}
        >
          <CommitInput
            id="vllm-slo-target"
            width={10}
            value={query.target === undefined ? '' : String(query.target)}
            placeholder={String(DEFAULT_SLO_TARGET)}
            invalid={Boolean(errors.target)}
            onCommit={(text) => onChange({ target: parseNumber(text) })}
          />
        </InlineField>
        <InlineField
          label="Window"
          labelWidth={10}
          tooltip="The compliance window for attainment and the error budget, 1h to 366d. Burn rates use their own fixed windows."
          invalid={Boolean(errors.window)}
          error={errors.window}
        >
          <CommitInput
            id="vllm-slo-window"
            width={10}
            value={query.window ?? ''}
            placeholder={DEFAULT_SLO_WINDOW}
            invalid={Boolean(errors.window)}
            onCommit={(text) => onChange({ window: text.trim() === '' ? undefined : text.trim() })}
          />
        </InlineField>
      </InlineFieldRow>
      {hint && (
        <Text color="warning" variant="bodySmall">
          {hint}
        </Text>
      )}
      <InlineFieldRow>
        <InlineField
          label="Signals"
          labelWidth={14}
          tooltip="Return only some series, e.g. one burn-rate pair for an alert rule. Empty: all of them."
          invalid={Boolean(errors.signals)}
          error={errors.signals}
        >
          <MultiCombobox<VllmSloSignal>
            id="vllm-slo-signals"
            width="auto"
            minWidth={24}
            maxWidth={60}
            placeholder="All: attainment, budget left, four burn rates"
            options={SLO_SIGNAL_OPTIONS}
            value={query.signals ?? []}
            onChange={(items) => {
              const signals = items.map((i) => i.value);
              onChange({ signals: signals.length > 0 ? signals : undefined });
            }}
            isClearable
          />
        </InlineField>
      </InlineFieldRow>
    </>
  );
}
