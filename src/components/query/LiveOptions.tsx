import React from 'react';
import { InlineField, InlineFieldRow, InlineSwitch } from '@grafana/ui';

import { parseK } from '../../queryValidation';
import { CommitInput } from './CommitInput';
import { PriorityFields } from './PriorityFields';
import { OptionsProps } from './types';

/** The Live switch of queue and fleet: the panel subscribes to the backend's channel (src/live.ts) instead of polling. */
function LiveField({ query, onChange }: Pick<OptionsProps, 'query' | 'onChange'>) {
  return (
    <InlineField
      label="Live"
      labelWidth={8}
      tooltip="Stream this query through Grafana Live: the backend pushes it every scrape interval, one Prometheus query per tick however many panels show it, instead of the dashboard polling."
    >
      <InlineSwitch
        id="vllm-stream"
        value={Boolean(query.live)}
        onChange={(event) => onChange({ live: event.currentTarget.checked })}
      />
    </InlineField>
  );
}

/** Queue depth: Live, and the served rate and queue time per vLLM priority class. */
export function QueueOptions(props: OptionsProps) {
  return (
    <InlineFieldRow>
      <LiveField {...props} />
      <PriorityFields queryType="queue" query={props.query} errors={props.errors} onChange={props.onChange} />
    </InlineFieldRow>
  );
}

/** Fleet: how many of the worst rows to keep (empty: every engine), and Live. */
export function FleetOptions({ query, errors, onChange }: OptionsProps) {
  return (
    <InlineFieldRow>
      <InlineField
        label="Worst"
        labelWidth={8}
        tooltip="Keep only the k worst engines (the table is sorted worst first): a whole number, or a variable. Empty: every engine."
        invalid={Boolean(errors.worst)}
        error={errors.worst}
      >
        <CommitInput
          id="vllm-worst"
          width={8}
          value={query.worst === undefined ? '' : String(query.worst)}
          placeholder="all"
          invalid={Boolean(errors.worst)}
          onCommit={(text) => onChange({ worst: parseK(text) })}
        />
      </InlineField>
      <LiveField query={query} onChange={onChange} />
    </InlineFieldRow>
  );
}
