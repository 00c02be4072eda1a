import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { choiceOptions, optionSpec } from '../../queryOptions';
import { parseNumber } from '../../sloOptions';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

/** The wait whose p99 the replica count must keep under the threshold (pkg/models capacity.go). */
export type VllmCapacityObjective = 'queue_time' | 'ttft';

/** Capacity output: the table, the what-if and the demand series (default), one of them, or the per-server efficiency. */
export type VllmCapacityFormat = 'both' | 'table' | 'series' | 'whatif' | 'servers';

const OBJECTIVE_OPTIONS = choiceOptions<VllmCapacityObjective>('capacity', 'wait', {
  queue_time: { label: 'Queue time p99', description: 'Time requests wait before their first step' },
  ttft: { label: 'TTFT p99', description: 'Time to the first token: the wait plus the prefill' },
});

const FORMAT_OPTIONS = choiceOptions<VllmCapacityFormat>('capacity', 'format', {
  both: { label: 'All', description: 'A row per model, the what-if per replica count, and the demand over time' },
  table: { label: 'Table only', description: 'Replicas now, needed and desired, demand, per-replica capacity' },
  series: { label: 'Series only', description: 'Requests/s arriving per model over time' },
  whatif: { label: 'What-if only', description: 'Predicted queue-time and TTFT p99 per replica count' },
  servers: { label: 'Per server', description: 'GPUs, tokens/s per GPU, idle share, cost and energy of each server' },
});

const placeholder = (field: string) => String(optionSpec('capacity', field).default);

/**
 * Capacity: the objective the replica count must meet (queue time or TTFT p99 under a threshold), the headroom kept
 * on top of the demand, how soon today's queue must be worked off, and the output. Every field may stay empty: the
 * backend's defaults (queue p99 ≤ 1 s, 20% headroom, 5 min drain) answer at once.
 */
export function CapacityOptions({ query, errors, onChange }: Pick<OptionsProps, 'query' | 'errors' | 'onChange'>) {
  return (
    <>
      <InlineFieldRow>
        <InlineField label="Objective" labelWidth={14} invalid={Boolean(errors.wait)} error={errors.wait}>
          <RadioButtonGroup<VllmCapacityObjective>
            options={OBJECTIVE_OPTIONS}
            value={(query.wait as VllmCapacityObjective | undefined) ?? 'queue_time'}
            onChange={(wait) => onChange({ wait: wait === 'queue_time' ? undefined : wait })}
          />
        </InlineField>
        <InlineField
          label="Under (s)"
          labelWidth={10}
          tooltip="The p99 the replica count must keep at or under, in seconds."
          invalid={Boolean(errors.threshold)}
          error={errors.threshold}
        >
          <CommitInput
            id="vllm-capacity-threshold"
            width={10}
            value={query.threshold === undefined ? '' : String(query.threshold)}
            placeholder={placeholder('threshold')}
            invalid={Boolean(errors.threshold)}
            onCommit={(text) => onChange({ threshold: parseNumber(text) })}
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField
          label="Headroom"
          labelWidth={14}
          tooltip="Spare capacity kept on top of the demand, 0 to 5: 0.2 plans for 20% more than the load seen."
          invalid={Boolean(errors.headroom)}
          error={errors.headroom}
        >
          <CommitInput
            id="vllm-capacity-headroom"
            width={10}
            value={query.headroom === undefined ? '' : String(query.headroom)}
            placeholder={placeholder('headroom')}
            invalid={Boolean(errors.headroom)}
            onCommit={(text) => onChange({ headroom: parseNumber(text) })}
          />
        </InlineField>
        <InlineField
          label="Drain"
          labelWidth={10}
          tooltip="How soon the queue standing now must be worked off (10s to 1h): the closed form adds queue ÷ drain to the arrival rate."
          invalid={Boolean(errors.drain)}
          error={errors.drain}
        >
          <CommitInput
            id="vllm-capacity-drain"
            width={10}
            value={query.drain ?? ''}
            placeholder={placeholder('drain')}
            invalid={Boolean(errors.drain)}
            onCommit={(text) => onChange({ drain: text.trim() === '' ? undefined : text.trim() })}
          />
        </InlineField>
        <InlineField label="Output" labelWidth={10} invalid={Boolean(errors.format)} error={errors.format}>
          <RadioButtonGroup<VllmCapacityFormat>
            options={FORMAT_OPTIONS}
            value={(query.format as VllmCapacityFormat | undefined) ?? 'both'}
            onChange={(format) => onChange({ format: format === 'both' ? undefined : format })}
          />
        </InlineField>
      </InlineFieldRow>
    </>
  );
}
