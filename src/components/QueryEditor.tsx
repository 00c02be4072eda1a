import React, { ComponentType } from 'react';
import { Combobox, ComboboxOption, InlineField, InlineFieldRow, RadioButtonGroup, Stack } from '@grafana/ui';

import { QUERY_TYPES, QUERY_TYPE_OPTIONS, defaultGroupingFor, groupingOptionsFor } from '../queryOptions';
import { isQueryValid, validateQuery } from '../queryValidation';
import { DEFAULT_QUERY, VllmGrouping, VllmQuery, VllmQueryEditorProps, VllmQueryType } from '../types';
import { CommonOptions } from './query/CommonOptions';
import { FilterFields, FilterKey } from './query/FilterFields';
import { GpuOptions } from './query/GpuOptions';
import { KVTransferOptions } from './query/KVTransferOptions';
import { FleetOptions, QueueOptions } from './query/LiveOptions';
import { CapacityOptions } from './query/CapacityOptions';
import { LoRAOptions } from './query/LoRAOptions';
import { ContainerOptions } from './query/ContainerOptions';
import { PreemptionOptions } from './query/PreemptionOptions';
import { PromQLOptions } from './query/PromQLOptions';
import { SaturationOptions } from './query/SaturationOptions';
import { SloOptions } from './query/SloOptions';
import { WorkloadOptions } from './query/WorkloadOptions';
import { TopKOptions } from './query/TopKOptions';
import { WaitTimeOptions } from './query/WaitTimeOptions';
import { OptionsProps } from './query/types';

export type Props = VllmQueryEditorProps & {
  /**
   * Set by the annotation editor: preemptions are always events there (the series switch is hidden), and
   * grouping / legend, which only shape series, are not shown for them.
   */
  annotationMode?: boolean;
};

/** What each type's options component gets: the common props, and whether the editor is the annotation editor. */
type TypeOptionsProps = OptionsProps & { annotationMode: boolean };

/** For the types that have no options of their own (their grouping, filters and common options are enough). */
function NoOptions(): null {
  return null;
}

/** Preemptions' output switch; the annotation editor always asks for events, so it shows none there. */
function PreemptionTypeOptions({ annotationMode, ...props }: TypeOptionsProps) {
  return annotationMode ? null : <PreemptionOptions {...props} />;
}

/**
 * Each query type's own options. A Record over VllmQueryType (generated from the backend's table,
 * queryTypes.gen.ts): a type added to the table fails to compile here until it has its entry.
 */
export const OPTIONS_COMPONENTS: Record<VllmQueryType, ComponentType<TypeOptionsProps>> = {
  queue: QueueOptions,
  waitTime: WaitTimeOptions,
  preemptions: PreemptionTypeOptions,
  topk: TopKOptions,
  gpu: GpuOptions,
  // Always one table row per engine (its only format is the table): how many of the worst, and Live.
  fleet: FleetOptions,
  saturation: SaturationOptions,
  slo: SloOptions,
  host: NoOptions,
  container: ContainerOptions,
  prefixCache: NoOptions,
  specDecode: NoOptions,
  lora: LoRAOptions,
  capacity: CapacityOptions,
  kvTransfer: KVTransferOptions,
  workload: WorkloadOptions,
  promql: PromQLOptions,
};

/**
 * Where a type's options sit when not below the filters: preemptions' output switch beside the query type, the
 * PromQL expression above the (hidden) filters.
 */
const OPTIONS_PLACE: Partial<Record<VllmQueryType, 'queryRow' | 'aboveFilters'>> = {
  preemptions: 'queryRow',
  promql: 'aboveFilters',
};

const ALL_FILTERS: FilterKey[] = ['models', 'instances', 'engines'];

/** The filters each query type uses; PromQL filters inside its expression. */
function filtersFor(queryType: VllmQueryType): FilterKey[] {
  switch (queryType) {
    case 'gpu':
      return ['instances'];
    case 'promql':
      return [];
    default:
      return ALL_FILTERS;
  }
}

/**
 * Query types that have a `format` option (from the backend's table); it means something else in each, so it does
 * not carry over.
 */
const FORMAT_TYPES: VllmQueryType[] = QUERY_TYPES.types
  .filter((t) => t.options?.some((o) => o.field === 'format'))
  .map((t) => t.type);

/**
 * The query editor: a query type, then only the options that type takes. Fields the current type does not show are
 * kept untouched (every change spreads the whole query), so switching back and forth loses nothing.
 */
export function QueryEditor({ query: rawQuery, datasource, onChange, onRunQuery, annotationMode = false }: Props) {
  // Saved queries from before a field existed may lack it; show (and send) the defaults instead of blanks.
  const query: VllmQuery = { ...rawQuery, queryType: rawQuery.queryType ?? DEFAULT_QUERY.queryType ?? 'queue' };
  const { queryType } = query;
  const errors = validateQuery(query);
  const variableRefs = datasource.getVariableRefs();

  // Discrete choices run the query at once; free text waits for blur. A query that fails validation is still
  // stored (so nothing typed is lost) but not run: the backend would only answer with the same error.
  const change = (patch: Partial<VllmQuery>, run = true) => {
    const next = { ...rawQuery, ...patch };
    if (Object.keys(patch).length > 0) {
      onChange(next);
    }
    if (run && isQueryValid({ ...next, queryType: next.queryType ?? query.queryType })) {
      onRunQuery();
    }
  };

  // A grouping the new type does not accept would make the backend reject the query; fall back to the default.
  // GPU "table" is top-k's "table only", GPU "series" is top-k's "series only": drop format between the two.
  const onQueryTypeChange = (option: ComboboxOption<VllmQueryType> | null | undefined) => {
    // Combobox hands over undefined when Enter is pressed while its stale highlight points past the filtered list.
    if (!option) {
      return;
    }
    const patch: Partial<VllmQuery> = { queryType: option.value };
    if (query.grouping !== undefined && !groupingOptionsFor(option.value).some((o) => o.value === query.grouping)) {
      // The fleet table has one grouping (engine), which the backend applies when none is given.
      patch.grouping = option.value === 'fleet' ? undefined : DEFAULT_QUERY.grouping;
    }
    if (query.format !== undefined && option.value !== queryType && FORMAT_TYPES.includes(option.value)) {
      patch.format = undefined;
    }
    change(patch);
  };

  const events = queryType === 'preemptions' && (annotationMode || !query.asSeries);
  const gpuTable = queryType === 'gpu' && (query.format ?? 'table') === 'table';
  const topkTable = queryType === 'topk' && query.format === 'table';
  const diagnosisTable = queryType === 'fleet' || (queryType === 'saturation' && query.format === 'table');
  const loraTable = queryType === 'lora' && (query.format ?? 'table') === 'table';
  const containerTable = queryType === 'container' && query.format === 'table';
  const series = !events && !gpuTable && !topkTable && !diagnosisTable && !loraTable && !containerTable;
  // The backend checks every filter whatever the type, so a filter this type does not use is still shown while
  // it holds an invalid value (from hand-written JSON), or the error could not be seen nor fixed.
  const filters = ALL_FILTERS.filter((key) => filtersFor(queryType).includes(key) || errors[key]);
  const common = { query, errors, variableRefs, onChange: change };
  const Options = OPTIONS_COMPONENTS[queryType] ?? NoOptions;
  const place = OPTIONS_PLACE[queryType] ?? 'belowFilters';
  const options = <Options {...common} annotationMode={annotationMode} />;

  return (
    <Stack direction="column" gap={0}>
      <InlineFieldRow>
        <InlineField label="Query" labelWidth={12}>
          <Combobox
            id="vllm-query-type"
            width={24}
            options={QUERY_TYPE_OPTIONS}
            value={queryType}
            onChange={onQueryTypeChange}
          />
        </InlineField>
        {place === 'queryRow' && options}
        {!events && queryType !== 'promql' && queryType !== 'fleet' && (
          <InlineField label="Group by" labelWidth={12} invalid={Boolean(errors.grouping)} error={errors.grouping}>
            <RadioButtonGroup<VllmGrouping>
              options={groupingOptionsFor(queryType)}
              value={query.grouping ?? defaultGroupingFor(queryType)}
              onChange={(grouping) => change({ grouping })}
            />
          </InlineField>
        )}
      </InlineFieldRow>
      {place === 'aboveFilters' && options}
      <FilterFields
        datasource={datasource}
        show={filters}
        models={query.models}
        instances={query.instances}
        engines={query.engines}
        errors={errors}
        onChange={(key, values) => change({ [key]: values })}
      />
      {place === 'belowFilters' && options}
      <CommonOptions
        {...common}
        showLegend={series}
        showMinStep={!(queryType === 'gpu' && (query.source ?? 'agents') === 'agents')}
        showMatchers={queryType !== 'gpu' || Boolean(query.matchers)}
      />
    </Stack>
  );
}
