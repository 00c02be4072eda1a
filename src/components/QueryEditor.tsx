import React, { ChangeEvent } from 'react';
import { QueryEditorProps, SelectableValue } from '@grafana/data';
import { Combobox, ComboboxOption, InlineField, Input, RadioButtonGroup, Stack } from '@grafana/ui';

import { DataSource } from '../datasource';
import { DEFAULT_QUERY, VllmDataSourceOptions, VllmGrouping, VllmQuery, VllmQueryType } from '../types';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmDataSourceOptions>;

export const QUERY_TYPE_OPTIONS: Array<ComboboxOption<VllmQueryType>> = [
  { value: 'queue', label: 'Queue depth', description: 'Running and waiting requests' },
  { value: 'waitTime', label: 'Wait time', description: 'Queue / first-token latency quantiles' },
  { value: 'preemptions', label: 'Preemptions', description: 'Requests preempted for lack of KV cache' },
  { value: 'topk', label: 'Top-k', description: 'The k busiest models or servers' },
  { value: 'gpu', label: 'GPU', description: 'KV-cache and GPU utilisation' },
];

export const GROUPING_OPTIONS: Array<SelectableValue<VllmGrouping>> = [
  { value: 'none', label: 'Fleet', description: 'One series for the whole fleet' },
  { value: 'model', label: 'Model' },
  { value: 'instance', label: 'Instance' },
  { value: 'instance_engine', label: 'Engine', description: 'One series per engine of each instance' },
];

/** Top-k ranks servers or engines, so the backend only accepts those groupings for it. */
const TOPK_GROUPINGS: VllmGrouping[] = ['instance', 'instance_engine'];

/** The groupings the backend accepts for a query type (pkg/models/query.go parseGrouping). */
export function groupingOptionsFor(queryType: VllmQueryType): Array<SelectableValue<VllmGrouping>> {
  return queryType === 'topk'
    ? GROUPING_OPTIONS.filter((o) => o.value !== undefined && TOPK_GROUPINGS.includes(o.value))
    : GROUPING_OPTIONS;
}

/**
 * Minimal query editor: what to query, how to group it, and a legend. Filters, quantiles and top-k options come
 * later; fields this editor does not show are kept untouched because every change spreads the whole query.
 */
export function QueryEditor({ query, onChange, onRunQuery }: Props) {
  // Saved queries from before a field existed may lack it; show (and send) the defaults instead of blanks.
  const queryType = query.queryType ?? DEFAULT_QUERY.queryType ?? 'queue';
  const grouping = query.grouping ?? DEFAULT_QUERY.grouping;

  // Discrete choices run the query at once; free text (legend) waits for blur so typing does not spam queries.
  // A grouping the new type does not accept would make the backend reject the query; fall back to the default.
  const onQueryTypeChange = (option: ComboboxOption<VllmQueryType>) => {
    const allowed = groupingOptionsFor(option.value).some((o) => o.value === query.grouping);
    const next: VllmQuery = { ...query, queryType: option.value };
    if (query.grouping !== undefined && !allowed) {
      next.grouping = DEFAULT_QUERY.grouping;
    }
    onChange(next);
    onRunQuery();
  };

  const onGroupingChange = (value: VllmGrouping) => {
    onChange({ ...query, grouping: value });
    onRunQuery();
  };

  const onLegendChange = (event: ChangeEvent<HTMLInputElement>) => {
    onChange({ ...query, legend: event.currentTarget.value });
  };

  return (
    <Stack gap={1} wrap="wrap">
      <InlineField label="Query" labelWidth={10}>
        <Combobox
          id="vllm-query-type"
          width={24}
          options={QUERY_TYPE_OPTIONS}
          value={queryType}
          onChange={onQueryTypeChange}
        />
      </InlineField>
      <InlineField label="Group by" labelWidth={12}>
        <RadioButtonGroup options={groupingOptionsFor(queryType)} value={grouping} onChange={onGroupingChange} />
      </InlineField>
      <InlineField
        label="Legend"
        labelWidth={10}
        tooltip="Series name template, e.g. {{model}} on {{instance}}. Dashboard variables are allowed."
      >
        <Input
          id="vllm-legend"
          width={30}
          value={query.legend ?? ''}
          placeholder="Auto"
          onChange={onLegendChange}
          onBlur={onRunQuery}
        />
      </InlineField>
    </Stack>
  );
}
