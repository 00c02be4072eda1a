import React from 'react';
import { InlineField, InlineFieldRow, InlineSwitch } from '@grafana/ui';

import { DEFAULT_FAMILY, DEFAULT_WAIT_FORMAT, FAMILY_OPTIONS, WAIT_FORMAT_OPTIONS } from '../../queryOptions';
import { ChoiceField } from './ChoiceField';
import { PriorityFields } from './PriorityFields';
import { QuantilesField } from './QuantilesField';
import { OptionsProps } from './types';

/**
 * Wait time: which latency histogram, and either its quantiles (and whether to count requests still waiting) or its
 * distribution as a heatmap, where quantiles, the live wait and the priority split do not apply.
 */
export function WaitTimeOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  const heatmap = query.format === 'heatmap';
  return (
    <InlineFieldRow>
      {!heatmap && (
        <QuantilesField
          id="vllm-quantiles"
          what="Latency quantiles"
          query={query}
          errors={errors}
          onChange={onChange}
        />
      )}
      <ChoiceField
        label="Latency"
        id="vllm-family"
        tooltip="Which vLLM latency histogram to read."
        value={query.family}
        defaultValue={DEFAULT_FAMILY}
        options={FAMILY_OPTIONS}
        variableRefs={variableRefs}
        error={errors.family}
        onChange={(family) => onChange({ family: family as OptionsProps['query']['family'] })}
      />
      {!heatmap && (
        <InlineField
          label="Live wait"
          labelWidth={12}
          tooltip="Histograms count a request only when it finishes. Live adds the wait of requests still queued (Little's law), so a stuck queue shows at once."
        >
          <InlineSwitch
            id="vllm-live"
            value={Boolean(query.live)}
            onChange={(event) => onChange({ live: event.currentTarget.checked })}
          />
        </InlineField>
      )}
      <ChoiceField
        label="Format"
        id="vllm-wait-format"
        tooltip="Quantiles: quantile and mean series. Heatmap: how many requests fell in each latency bucket per step, for the Heatmap panel (set Min interval to four scrapes or more for exact counts)."
        value={query.format}
        defaultValue={DEFAULT_WAIT_FORMAT}
        options={WAIT_FORMAT_OPTIONS}
        variableRefs={variableRefs}
        error={errors.format}
        onChange={(format) => onChange({ format: format as OptionsProps['query']['format'] })}
      />
      {!heatmap && query.family !== 'itl' && (
        <PriorityFields queryType="waitTime" query={query} errors={errors} onChange={onChange} />
      )}
    </InlineFieldRow>
  );
}
