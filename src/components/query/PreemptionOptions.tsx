import React from 'react';
import { InlineField, RadioButtonGroup } from '@grafana/ui';

import { OptionsProps } from './types';

type Output = 'events' | 'rate' | 'perRequest';

const OUTPUT_OPTIONS: Array<{ value: Output; label: string; description: string }> = [
  { value: 'events', label: 'Annotations', description: 'One event per preemption burst, with the KV-cache usage' },
  { value: 'rate', label: 'Rate series', description: 'Preemptions per second' },
  {
    value: 'perRequest',
    label: 'Per request',
    description:
      'From vllm:request_num_preemptions (vLLM 0.30+): share of finished requests preempted more than once, ' +
      'at most at least once, mean and p99 preemptions per request',
  },
];

/** The query fields each output is stored as (perRequest implies asSeries in the backend). */
const FIELDS: Record<Output, { asSeries: boolean; perRequest?: boolean }> = {
  events: { asSeries: false, perRequest: undefined },
  rate: { asSeries: true, perRequest: undefined },
  perRequest: { asSeries: true, perRequest: true },
};

/** Preemptions: events (for annotations or a table), a preemption-rate series, or the per-request distribution. */
export function PreemptionOptions({ query, onChange }: Pick<OptionsProps, 'query' | 'onChange'>) {
  const value: Output = query.perRequest ? 'perRequest' : query.asSeries ? 'rate' : 'events';
  return (
    <InlineField label="Output" labelWidth={10}>
      <RadioButtonGroup options={OUTPUT_OPTIONS} value={value} onChange={(v) => onChange(FIELDS[v])} />
    </InlineField>
  );
}
