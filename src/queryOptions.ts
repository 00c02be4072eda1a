/*
 * The choices the query editor offers and the defaults it shows. The values, their order, the defaults and the limits
 * come from the backend's table of query types (pkg/models/querytable.go), written to queryTypes.json by
 * `go generate ./pkg/models/`, which also writes queryTypes.gen.ts (the query types and their labels and descriptions,
 * from the query table, pkg/models/querytable.go); the wording of the other values, which is UI wording, lives here. The backend
 * applies the same defaults when a field is left out, so the editor never has to write a default to get data.
 */
import { ComboboxOption } from '@grafana/ui';

import { QUERY_TYPE_WORDING } from './queryTypes.gen';
import queryTypes from './queryTypes.json';
import {
  VllmAggregation,
  VllmGpuFormat,
  VllmGpuSource,
  VllmGrouping,
  VllmContainerFormat,
  VllmLoRAFormat,
  VllmQueryType,
  VllmRankSignal,
  VllmSaturationFormat,
  VllmSloObjective,
  VllmWaitFamily,
  VllmWaitFormat,
} from './types';

/** An interval of numbers; an open end is excluded (pkg/models/querytypes.go Range). */
export interface RangeSpec {
  min: number;
  max: number;
  minOpen?: boolean;
  maxOpen?: boolean;
}

/** One JSON field of a query type (pkg/models/querytypes.go Option). */
export interface OptionSpec {
  field: string;
  kind: 'choice' | 'choices' | 'integer' | 'number' | 'numbers' | 'duration' | 'text' | 'boolean';
  /** A choice's allowed values, in the editor's order. */
  values?: string[];
  /** Accepted values that stand for one of values. */
  aliases?: Record<string, string>;
  /** What the backend uses when the field is absent. */
  default?: string | number | number[];
  range?: RangeSpec;
  /** A duration's bounds, both included (Prometheus durations). */
  durations?: { min: string; max: string };
  required?: boolean;
}

/** The slo type's objective kinds and vLLM's default bucket bounds per family (pkg/models/querytypes.go SLOSpec). */
export interface SloSpec {
  objectives: Array<{ name: VllmSloObjective; defaultTarget: number; fields?: string[] }>;
  bounds: Record<string, number[]>;
}

/** One query type's rules (pkg/models/querytypes.go TypeSpec). */
export interface TypeSpec {
  type: VllmQueryType;
  groupings: VllmGrouping[];
  defaultGrouping: VllmGrouping;
  groupingReason?: string;
  options?: OptionSpec[];
  slo?: SloSpec;
}

/** The backend's table of query types (pkg/models/querytypes.go Schema). */
export interface QueryTypesSchema {
  groupings: VllmGrouping[];
  maxFilterValues: number;
  numberPattern: string;
  types: TypeSpec[];
}

export const QUERY_TYPES = queryTypes as QueryTypesSchema;

/** The rules of a query type; undefined for a type the backend does not know. */
export function typeSpec(queryType: VllmQueryType): TypeSpec | undefined {
  return QUERY_TYPES.types.find((t) => t.type === queryType);
}

/** An option of a query type; an empty one (no values, no default) when the type has none by that name. */
export function optionSpec(queryType: VllmQueryType, field: string): OptionSpec {
  return typeSpec(queryType)?.options?.find((o) => o.field === field) ?? { field, kind: 'text' };
}

/** Whether n lies inside the range. */
export function inRange(r: RangeSpec, n: number): boolean {
  return (n > r.min || (!r.minOpen && n === r.min)) && (n < r.max || (!r.maxOpen && n === r.max));
}

/** The values a choice option accepts: its values and their aliases. */
export function acceptedValues(o: OptionSpec): Array<{ value: string }> {
  return [...(o.values ?? []), ...Object.keys(o.aliases ?? {})].map((value) => ({ value }));
}

/** UI wording of a value. */
export type Wording = { label: string; description?: string };

/**
 * A choice option's values in the table's order, each with its wording from labels. A value the table has and labels
 * lacks (a backend newer than the editor's types) is shown by its name.
 */
export function choiceOptions<T extends string>(
  queryType: VllmQueryType,
  field: string,
  labels: Record<T, Wording>
): Array<{ value: T } & Wording> {
  const values = (optionSpec(queryType, field).values ?? []) as T[];
  return values.map((value) => ({ value, ...(labels[value] ?? { label: value }) }));
}

/** The syntax of a number written as text, the backend's own (pkg/models/number.go): "5x", "Inf", "1_000" are not. */
export const NUMBER = new RegExp(QUERY_TYPES.numberPattern);

const numberOption = (queryType: VllmQueryType, field: string) => optionSpec(queryType, field).range!;

export const DEFAULT_QUANTILES = optionSpec('waitTime', 'quantiles').default as number[];
export const DEFAULT_K = optionSpec('topk', 'k').default as number;
/** The range of k: whole numbers 1 to 100. */
export const K_RANGE = numberOption('topk', 'k');
export const MAX_K = K_RANGE.max;
export const DEFAULT_FAMILY = optionSpec('waitTime', 'family').default as VllmWaitFamily;
export const DEFAULT_WAIT_FORMAT = optionSpec('waitTime', 'format').default as VllmWaitFormat;
export const DEFAULT_RANK_BY = optionSpec('topk', 'rankBy').default as VllmRankSignal;
export const DEFAULT_AGGREGATION = optionSpec('topk', 'aggregation').default as VllmAggregation;
export const DEFAULT_GPU_SOURCE = optionSpec('gpu', 'source').default as VllmGpuSource;
export const DEFAULT_GPU_FORMAT = optionSpec('gpu', 'format').default as VllmGpuFormat;
/** The backend's MaxFilterValues: one selector may not list more values. */
export const MAX_FILTER_VALUES = QUERY_TYPES.maxFilterValues;

/** Every query type, in the backend's order, with its wording from the generated queryTypes.gen.ts. */
export const QUERY_TYPE_OPTIONS: Array<ComboboxOption<VllmQueryType>> = QUERY_TYPES.types.map((t) => ({
  value: t.type,
  ...(QUERY_TYPE_WORDING[t.type] ?? { label: t.type }),
}));

const GROUPING_WORDING: Record<VllmGrouping, Wording> = {
  none: { label: 'Fleet', description: 'One series for the whole fleet' },
  model: { label: 'Model' },
  instance: { label: 'Instance' },
  instance_engine: { label: 'Engine', description: 'One series per engine of each instance' },
  role: { label: 'Role', description: 'One series per prefill/decode role (disaggregated serving)' },
};

export const GROUPING_OPTIONS: Array<{ value: VllmGrouping; label: string; description?: string }> =
  QUERY_TYPES.groupings.map((value) => ({ value, ...(GROUPING_WORDING[value] ?? { label: value }) }));

/**
 * The groupings the backend accepts for a query type: top-k and saturation rank or judge servers or engines (and
 * saturation role pools), the fleet table is always one row per engine, host and LoRA data come once per server.
 */
export function groupingOptionsFor(queryType: VllmQueryType) {
  const allowed = typeSpec(queryType)?.groupings;
  return allowed ? GROUPING_OPTIONS.filter((o) => allowed.includes(o.value)) : GROUPING_OPTIONS;
}

/** The grouping the backend applies when none is given: SLO by model, KV transfer by role, fleet by engine. */
export function defaultGroupingFor(queryType: VllmQueryType): VllmGrouping {
  return typeSpec(queryType)?.defaultGrouping ?? 'instance';
}

/** LoRA output, stored as format; absent means the table's default (table). */
export const LORA_FORMAT_OPTIONS = choiceOptions<VllmLoRAFormat>('lora', 'format', {
  table: { label: 'Table', description: 'One row per server: running and waiting adapters now, max LoRAs' },
  series: { label: 'Series', description: 'Running and waiting adapter counts per server over time' },
});

/** Container output, stored as format; absent means series (the backend's default). */
export const CONTAINER_FORMAT_OPTIONS = choiceOptions<VllmContainerFormat>('container', 'format', {
  series: {
    label: 'Series',
    description: 'CPU, throttling, memory, OOM, network and disk per server and container over time',
  },
  table: { label: 'Table', description: 'One row per container: last values, limits ("no limit" where none is set)' },
});

/** Saturation output, stored as format; absent means the table's default (both). */
export const SATURATION_FORMAT_OPTIONS = choiceOptions<VllmSaturationFormat>('saturation', 'format', {
  both: {
    label: 'Series + table',
    description: 'Utilisation, arrivals vs completions, verdict timelines and the verdict table',
  },
  table: { label: 'Table only', description: 'The verdict per instance with its reason' },
  series: { label: 'Series only', description: 'Utilisation, arrivals vs completions and each verdict timeline' },
});

/** The formats the fleet accepts: a table ("both", saturation's default, stands for it). */
export const FLEET_FORMAT_OPTIONS = acceptedValues(optionSpec('fleet', 'format'));

export const FAMILY_OPTIONS: Array<ComboboxOption<string>> = choiceOptions<VllmWaitFamily>('waitTime', 'family', {
  queue_time: { label: 'Queue time', description: 'Time waiting for a scheduler slot' },
  ttft: { label: 'Time to first token' },
  itl: { label: 'Inter-token latency' },
  e2e: { label: 'End-to-end latency' },
  prefill: { label: 'Prefill time' },
  decode: { label: 'Decode time' },
  inference: { label: 'Inference time', description: 'Prefill plus decode' },
});

export const WAIT_FORMAT_OPTIONS: Array<ComboboxOption<string>> = choiceOptions<VllmWaitFormat>('waitTime', 'format', {
  series: { label: 'Quantiles', description: 'Quantiles and mean over time (time series)' },
  heatmap: {
    label: 'Heatmap',
    description: 'Requests per latency bucket per step (use the Heatmap panel; set Min interval for exact counts)',
  },
});

export const RANK_BY_OPTIONS: Array<ComboboxOption<string>> = choiceOptions<VllmRankSignal>('topk', 'rankBy', {
  waiting: { label: 'Waiting requests' },
  running: { label: 'Running requests' },
  kv_usage: { label: 'KV-cache usage' },
  wait_p99: { label: 'Queue time p99' },
  preemption_rate: { label: 'Preemption rate' },
});

export const AGGREGATION_OPTIONS: Array<ComboboxOption<string>> = choiceOptions<VllmAggregation>(
  'topk',
  'aggregation',
  {
    max: { label: 'Max', description: 'Worst value over the time range' },
    avg: { label: 'Average' },
    last: { label: 'Last', description: 'Value at the end of the time range' },
  }
);

export const GPU_SOURCE_OPTIONS = choiceOptions<VllmGpuSource>('gpu', 'source', {
  agents: { label: 'Node agents', description: 'Ask every node agent now: current values' },
  prometheus: { label: 'Prometheus', description: "The agents' vllm_node_gpu_* series over the time range" },
  dcgm: {
    label: 'dcgm-exporter',
    description: "NVIDIA dcgm-exporter's DCGM_FI_* series, joined to the vLLM pods (Kubernetes)",
  },
});

export const GPU_FORMAT_OPTIONS = choiceOptions<VllmGpuFormat>('gpu', 'format', {
  table: { label: 'Table' },
  series: { label: 'Time series' },
});

/** Grafana's built-in interval variables: the backend computes them itself (pkg/interval), so they pass through. */
export const BUILTIN_INTERVALS = ['$__interval', '${__interval}', '$__rate_interval', '${__rate_interval}'];

/**
 * Every built-in the backend resolves from the step it picks ($__interval, $__interval_ms, $__rate_interval,
 * $__range, $__range_s, $__range_ms, with or without braces). The browser's values for them would be wrong, and
 * $__rate_interval is not even a frontend variable, so interpolation leaves them alone.
 */
export const BACKEND_BUILTINS =
  /\$(__rate_interval|__interval_ms|__interval|__range_ms|__range_s|__range)\b|\$\{(__rate_interval|__interval_ms|__interval|__range_ms|__range_s|__range)\}/g;

/** Top-k output, stored as asSeries / format (see VllmQuery.format). */
export type TopKOutput = 'both' | 'series' | 'table';

export const TOPK_OUTPUT_OPTIONS: Array<{ value: TopKOutput; label: string; description: string }> = [
  { value: 'both', label: 'Series + table', description: 'Time series of the top k and a ranking table' },
  { value: 'series', label: 'Series only', description: 'For time-series panels and alerts' },
  { value: 'table', label: 'Table only', description: 'The ranking table, for table panels' },
];

/** True when the text refers to a dashboard variable in any of Grafana's syntaxes: $name, ${name[:fmt]}, [[name]]. */
export function hasVariable(text: string): boolean {
  return /\$\w+|\$\{[^}]+\}|\[\[[^\]]+\]\]/.test(text);
}
