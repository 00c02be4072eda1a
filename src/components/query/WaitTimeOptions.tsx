import React from 'react';
import { InlineField, InlineFieldRow, InlineSwitch } from '@grafana/ui';

import { DEFAULT_FAMILY, DEFAULT_QUANTILES, FAMILY_OPTIONS } from '../../queryOptions';
import { formatQuantiles, parseQuantiles } from '../../queryValidation';
import { ChoiceField } from './ChoiceField';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

/** Wait time: which quantiles of which latency histogram, and whether to count requests still waiting. */
export function WaitTimeOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Quantiles"
        labelWidth={12}
        tooltip="Comma-separated quantiles strictly between 0 and 1, e.g. 0.5, 0.9, 0.99. Variables allowed. Empty: 0.5, 0.9, 0.99."
        invalid={Boolean(errors.quantiles)}
        error={errors.quantiles}
      >
        <CommitInput
          id="vllm-quantiles"
          width={24}
          value={formatQuantiles(query.quantiles)}
          placeholder={formatQuantiles(DEFAULT_QUANTILES)}
          invalid={Boolean(errors.quantiles)}
          onCommit={(text) => onChange({ quantiles: parseQuantiles(text) })}
        />
      </InlineField>
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
