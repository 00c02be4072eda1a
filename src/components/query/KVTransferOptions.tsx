import React from 'react';
import { InlineField, InlineFieldRow } from '@grafana/ui';

import { DEFAULT_QUANTILES } from '../../queryOptions';
import { formatQuantiles, parseQuantiles } from '../../queryValidation';
import { CommitInput } from './CommitInput';
import { OptionsProps } from './types';

/**
 * KV transfer: which quantiles of the NIXL transfer time to show beside the byte, transfer and failure rates. The
 * grouping (role by default) is the editor's common "Group by".
 */
export function KVTransferOptions({ query, errors, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Quantiles"
        labelWidth={12}
        tooltip="Transfer-time quantiles, comma-separated, strictly between 0 and 1, e.g. 0.5, 0.9, 0.99. Variables allowed. Empty: 0.5, 0.9, 0.99."
        invalid={Boolean(errors.quantiles)}
        error={errors.quantiles}
      >
        <CommitInput
          id="vllm-kv-quantiles"
          width={24}
          value={formatQuantiles(query.quantiles)}
          placeholder={formatQuantiles(DEFAULT_QUANTILES)}
          invalid={Boolean(errors.quantiles)}
          onCommit={(text) => onChange({ quantiles: parseQuantiles(text) })}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
