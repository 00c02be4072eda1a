import React from 'react';
import { InlineField, InlineSwitch, MultiCombobox } from '@grafana/ui';

import { choiceOptions } from '../../queryOptions';
import { VllmQueryType } from '../../queryTypes.gen';
import { OptionsProps } from './types';

type PriorityClass = '<-1' | '-1' | '0' | '1' | '>1';

/** vLLM 0.32's priority label values (lower is served first), worded for the editor. */
const PRIORITY_WORDING: Record<PriorityClass, { label: string; description: string }> = {
  '<-1': { label: 'Above high (<-1)', description: 'Every priority below -1' },
  '-1': { label: 'High (-1)', description: 'Priority -1' },
  '0': { label: 'Default (0)', description: 'Priority 0, what a request gets unless it asks' },
  '1': { label: 'Low (1)', description: 'Priority 1' },
  '>1': { label: 'Below low (>1)', description: 'Every priority above 1' },
};

/**
 * Split or filter by vLLM's priority label, which engines started with --scheduling-policy priority (vLLM 0.32 and
 * later) add to their finished-request histograms and counters. Elsewhere the backend answers without a priority and
 * says so in a notice.
 */
export function PriorityFields({
  queryType,
  query,
  errors,
  onChange,
}: Pick<OptionsProps, 'query' | 'errors' | 'onChange'> & { queryType: VllmQueryType }) {
  const options = choiceOptions<PriorityClass>(queryType, 'priorities', PRIORITY_WORDING);
  return (
    <>
      <InlineField
        label="By priority"
        labelWidth={12}
        tooltip="One series per vLLM priority class (--scheduling-policy priority, vLLM 0.32 and later)."
      >
        <InlineSwitch
          id={`vllm-${queryType}-by-priority`}
          value={Boolean(query.byPriority)}
          onChange={(event) => onChange({ byPriority: event.currentTarget.checked || undefined })}
        />
      </InlineField>
      <InlineField
        label="Priorities"
        labelWidth={12}
        tooltip="Only requests of these priority classes. Empty: all, and engines without priority scheduling too."
        invalid={Boolean(errors.priorities)}
        error={errors.priorities}
      >
        <MultiCombobox<PriorityClass>
          id={`vllm-${queryType}-priorities`}
          width="auto"
          minWidth={16}
          maxWidth={40}
          placeholder="All"
          options={options}
          value={(query.priorities ?? []) as PriorityClass[]}
          onChange={(items) => {
            const priorities = items.map((i) => i.value);
            onChange({ priorities: priorities.length > 0 ? priorities : undefined });
          }}
          isClearable
        />
      </InlineField>
    </>
  );
}
