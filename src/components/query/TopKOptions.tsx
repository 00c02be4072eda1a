import React from 'react';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import {
  AGGREGATION_OPTIONS,
  DEFAULT_AGGREGATION,
  DEFAULT_K,
  DEFAULT_RANK_BY,
  MAX_K,
  RANK_BY_OPTIONS,
  TOPK_OUTPUT_OPTIONS,
  TopKOutput,
} from '../../queryOptions';
import { parseK } from '../../queryValidation';
import { VllmQuery } from '../../types';
import { ChoiceField } from './ChoiceField';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

/** Reads the output from asSeries / format the way the backend does (parseTopK: format "series" means asSeries). */
function outputOf(query: VllmQuery): TopKOutput {
  if (query.format === 'table') {
    return 'table';
  }
  return query.asSeries || query.format === 'series' ? 'series' : 'both';
}

/** Writes one consistent combination, so a value left from hand-written JSON cannot contradict the choice. */
const OUTPUT_PATCH: Record<TopKOutput, Partial<VllmQuery>> = {
  both: { asSeries: false, format: undefined },
  series: { asSeries: true, format: undefined },
  table: { asSeries: false, format: 'table' },
};

/** Top-k: how many, ranked by which signal, folded how over the range, and series, table or both. */
export function TopKOptions({ query, errors, variableRefs, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <InlineField
        label="k"
        labelWidth={6}
        tooltip={`How many instances or engines to keep: a whole number from 1 to ${MAX_K}, or a variable. Empty: ${DEFAULT_K}.`}
        invalid={Boolean(errors.k)}
        error={errors.k}
      >
        <CommitInput
          id="vllm-k"
          width={8}
          value={query.k === undefined ? '' : String(query.k)}
          placeholder={String(DEFAULT_K)}
          invalid={Boolean(errors.k)}
          onCommit={(text) => onChange({ k: parseK(text) })}
        />
      </InlineField>
      <ChoiceField
        label="Rank by"
        id="vllm-rank-by"
        tooltip="The signal that decides who is in the top k."
        value={query.rankBy}
        defaultValue={DEFAULT_RANK_BY}
        options={RANK_BY_OPTIONS}
        variableRefs={variableRefs}
        error={errors.rankBy}
        onChange={(rankBy) => onChange({ rankBy: rankBy as VllmQuery['rankBy'] })}
      />
      <ChoiceField
        label="Aggregation"
        id="vllm-aggregation"
        tooltip="How the signal is folded over the time range before ranking."
        value={query.aggregation}
        defaultValue={DEFAULT_AGGREGATION}
        options={AGGREGATION_OPTIONS}
        variableRefs={variableRefs}
        error={errors.aggregation}
        onChange={(aggregation) => onChange({ aggregation: aggregation as VllmQuery['aggregation'] })}
      />
      <InlineField label="Output" labelWidth={10} invalid={Boolean(errors.format)} error={errors.format}>
        <RadioButtonGroup
          options={TOPK_OUTPUT_OPTIONS}
          value={outputOf(query)}
          onChange={(output) => onChange(OUTPUT_PATCH[output])}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
