import React from 'react';
import { InlineField, InlineFieldRow, MultiCombobox, RadioButtonGroup, Text } from '@grafana/ui';

import {
  DEFAULT_SLO_FAMILY,
  DEFAULT_SLO_OBJECTIVE,
  DEFAULT_SLO_THRESHOLD,
  DEFAULT_SLO_WINDOW,
  SLO_FAMILY_OPTIONS,
  SLO_OBJECTIVE_OPTIONS,
  SLO_SIGNAL_OPTIONS,
  defaultTarget,
  isAvailability,
  parseNumber,
  snapHint,
} from '../../sloOptions';
import { VllmSloObjective, VllmSloSignal } from '../../types';
import { ChoiceField } from './ChoiceField';
import { CommitInput } from './CommitInput';
import { PriorityFields } from './PriorityFields';
import { OptionsProps } from './types';

/**
 * SLO: the objective (latency: histogram and threshold; or availability), its target and window, and which of its
 * series to return. Every field may stay empty: the backend's defaults (99% of TTFT within 1 s over 28 days, or 99.9%
 * of finished requests without error) show data at once.
 */
export function SloOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  const hint = snapHint(query);
  const latency = !isAvailability(query);
  return (
    <>
      <InlineFieldRow>
        <InlineField
          label="Objective"
          labelWidth={14}
          tooltip="Latency: requests under a threshold of a latency histogram. Availability: finished requests that did not end in error (vLLM's finished_reason); client aborts never reach vLLM's metrics, so client-side failures are not in it."
          invalid={Boolean(errors.objective)}
          error={errors.objective}
        >
          <RadioButtonGroup<VllmSloObjective>
            options={SLO_OBJECTIVE_OPTIONS}
            value={query.objective ?? DEFAULT_SLO_OBJECTIVE}
            onChange={(objective) =>
              onChange({ objective: objective === DEFAULT_SLO_OBJECTIVE ? undefined : objective })
            }
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        {latency && (
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
        )}
        {latency && (
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
        )}
        <InlineField
          label="Target"
          labelWidth={10}
          tooltip="Share of requests that must be good, between 0 and 1: 0.99 for 99%, 0.999 for 99.9%."
          invalid={Boolean(errors.target)}
          error={errors.target}
        >
          <CommitInput
            id="vllm-slo-target"
            width={10}
            value={query.target === undefined ? '' : String(query.target)}
            placeholder={String(defaultTarget(query))}
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
        {!(latency && query.family === 'itl') && (
          <PriorityFields queryType="slo" query={query} errors={errors} onChange={onChange} />
        )}
      </InlineFieldRow>
    </>
  );
}
