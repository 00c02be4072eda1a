import React from 'react';
import { InlineField, RadioButtonGroup } from '@grafana/ui';

import { OptionsProps } from './types';

const OUTPUT_OPTIONS = [
  { value: false, label: 'Annotations', description: 'One event per preemption burst, with the KV-cache usage' },
  { value: true, label: 'Rate series', description: 'Preemptions per second' },
];

/** Preemptions: events (for annotations or a table) or a preemption-rate time series. */
export function PreemptionOptions({ query, onChange }: Pick<OptionsProps, 'query' | 'onChange'>) {
  return (
    <InlineField label="Output" labelWidth={10}>
      <RadioButtonGroup
        options={OUTPUT_OPTIONS}
        value={Boolean(query.asSeries)}
        onChange={(asSeries) => onChange({ asSeries })}
      />
    </InlineField>
  );
}
