import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { QuantilesField } from './QuantilesField';
import { OptionsProps } from './types';

/**
 * KV transfer: which quantiles of the NIXL transfer time to show beside the byte, transfer and failure rates. The
 * grouping (role by default) is the editor's common "Group by".
 */
export function KVTransferOptions({ query, errors, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <QuantilesField
        id="vllm-kv-quantiles"
        what="Transfer-time quantiles"
        query={query}
        errors={errors}
        onChange={onChange}
      />
    </InlineFieldRow>
  );
}
