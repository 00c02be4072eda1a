import React from 'react';
import { InlineField, InlineFieldRow, InlineSwitch } from '@grafana/ui';

import { DEFAULT_FAMILY, FAMILY_OPTIONS } from '../../queryOptions';
import { ChoiceField } from './ChoiceField';
import { QuantilesField } from './QuantilesField';
import { OptionsProps } from './types';

/** Wait time: which quantiles of which latency histogram, and whether to count requests still waiting. */
export function WaitTimeOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <QuantilesField id="vllm-quantiles" what="Latency quantiles" query={query} errors={errors} onChange={onChange} />
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
    </InlineFieldRow>
  );
}
