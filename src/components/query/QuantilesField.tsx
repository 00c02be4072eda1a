import React from 'react';
import { InlineField } from '@grafana/ui';

import { optionSpec } from '../../queryOptions';
import { formatQuantiles, parseQuantiles } from '../../queryValidation';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

interface Props extends Pick<OptionsProps, 'query' | 'errors' | 'onChange'> {
  id: string;
  /** What the quantiles are of, as the tooltip starts: "Latency quantiles", "Transfer-time quantiles". */
  what: string;
}

/**
 * The quantiles option of the types that have one (wait time, KV transfer): comma-separated numbers committed on
 * blur or Enter, with the type's default list from the backend's table as the placeholder and in the tooltip.
 */
export function QuantilesField({ id, what, query, errors, onChange }: Props) {
  const spec = optionSpec(query.queryType, 'quantiles');
  const defaults = formatQuantiles(spec.default as number[] | undefined);
  return (
    <InlineField
      label="Quantiles"
      labelWidth={12}
      tooltip={`${what}, comma-separated, strictly between ${spec.range?.min ?? 0} and ${spec.range?.max ?? 1}, e.g. 0.5, 0.9, 0.99. Variables allowed. Empty: ${defaults}.`}
      invalid={Boolean(errors.quantiles)}
      error={errors.quantiles}
    >
      <CommitInput
        id={id}
        width={24}
        value={formatQuantiles(query.quantiles)}
        placeholder={defaults}
        invalid={Boolean(errors.quantiles)}
        onCommit={(text) => onChange({ quantiles: parseQuantiles(text) })}
      />
    </InlineField>
  );
}
