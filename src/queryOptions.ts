/*
 * The choices the query editor offers and the defaults it shows. They mirror pkg/models/query.go (QueryTypes,
 * Families, RankSignals, Aggregations, DefaultK, DefaultQuantiles): the backend is the source of truth and applies
 * the same defaults when a field is left out, so the editor never has to write a default to get data.
 */
import { ComboboxOption } from '@grafana/ui';

import {
  VllmAggregation,
  VllmGpuFormat,
  VllmGpuSource,
  VllmGrouping,
  VllmLoRAFormat,
  VllmQueryType,
  VllmRankSignal,
  VllmSaturationFormat,
  VllmWaitFamily,
} from './types';

export const DEFAULT_QUANTILES = [0.5, 0.9, 0.99];
export const DEFAULT_K = 5;
export const MAX_K = 100;
export const DEFAULT_FAMILY: VllmWaitFamily = 'queue_time';
export const DEFAULT_RANK_BY: VllmRankSignal = 'waiting';
export const DEFAULT_AGGREGATION: VllmAggregation = 'max';
export const DEFAULT_GPU_SOURCE: VllmGpuSource = 'agents';
export const DEFAULT_GPU_FORMAT: VllmGpuFormat = 'table';
/** The backend's MaxFilterValues: one selector may not list more values. */
export const MAX_FILTER_VALUES = 500;

export const QUERY_TYPE_OPTIONS: Array<ComboboxOption<VllmQueryType>> = [
  { value: 'queue', label: 'Queue depth', description: 'Running and waiting requests' },
  { value: 'waitTime', label: 'Wait time', description: 'Queue / first-token latency quantiles' },
  { value: 'preemptions', label: 'Preemptions', description: 'Requests preempted for lack of KV cache' },
  { value: 'topk', label: 'Top-k', description: 'The k busiest servers or engines' },
  { value: 'gpu', label: 'GPU', description: 'GPU memory, utilisation and power, joined to the vLLM engine on it' },
  { value: 'fleet', label: 'Fleet', description: 'One row per engine: state, load, latency; worst first' },
  {
    value: 'saturation',
    label: 'Saturation',
    description: 'A verdict per instance (queueing, KV-bound, …) with its evidence',
  },
  {
    value: 'slo',
    label: 'SLO',
    description: 'Latency or availability objective: attainment, error budget, burn rates',
  },
  { value: 'host', label: 'Host', description: 'CPU, memory, network and disk of the host under each instance' },
  {
    value: 'prefixCache',
    label: 'Prefix cache',
    description: 'Prefix-cache hit rate (local and KV connector) and prompt tokens/s by source',
  },
  {
    value: 'specDecode',
    label: 'Speculative decoding',
    description: 'Draft acceptance rate, mean acceptance length, acceptance by draft position',
  },
  { value: 'lora', label: 'LoRA adapters', description: 'The LoRA adapters in use on each server, and max_loras' },
  {
    value: 'kvTransfer',
    label: 'KV transfer',
    description: 'Prefill/decode KV-cache transfers (NIXL): time quantiles, bytes/s, failures/s',
  },
  {
    value: 'workload',
    label: 'Workload',
    description: 'Prompt and output lengths (means or heatmaps), finished requests/s, error share',
  },
  { value: 'promql', label: 'PromQL', description: 'Raw PromQL, for panels no vLLM query type covers' },
];

export const GROUPING_OPTIONS: Array<{ value: VllmGrouping; label: string; description?: string }> = [
  { value: 'none', label: 'Fleet', description: 'One series for the whole fleet' },
  { value: 'model', label: 'Model' },
  { value: 'instance', label: 'Instance' },
  { value: 'instance_engine', label: 'Engine', description: 'One series per engine of each instance' },
  { value: 'role', label: 'Role', description: 'One series per prefill/decode role (disaggregated serving)' },
];

/** Top-k ranks servers or engines, so the backend only accepts those groupings for it (parseGrouping). */
const TOPK_GROUPINGS: VllmGrouping[] = ['instance', 'instance_engine'];

/** The groupings the backend accepts for a query type (pkg/models/query.go parseGrouping, pkg/models/host.go). */
export function groupingOptionsFor(queryType: VllmQueryType) {
  if (queryType === 'fleet') {
    // Always one row per engine.
    return GROUPING_OPTIONS.filter((o) => o.value === 'instance_engine');
  }
  if (queryType === 'host' || queryType === 'lora') {
    // One answer per server: vLLM reports host and LoRA data once per server.
    return GROUPING_OPTIONS.filter((o) => o.value === 'instance');
  }
  if (queryType === 'saturation') {
    // A verdict per server or engine, or per role pool (prefill and decode are scaled apart).
    return GROUPING_OPTIONS.filter((o) => [...TOPK_GROUPINGS, 'role'].includes(o.value));
  }
  return queryType === 'topk' ? GROUPING_OPTIONS.filter((o) => TOPK_GROUPINGS.includes(o.value)) : GROUPING_OPTIONS;
}

/** LoRA output, stored as format (pkg/models/lora.go LoRAFormats); absent means table. */
export const LORA_FORMAT_OPTIONS: Array<{ value: VllmLoRAFormat; label: string; description: string }> = [
  { value: 'table', label: 'Table', description: 'One row per server: running and waiting adapters now, max LoRAs' },
  { value: 'series', label: 'Series', description: 'Running and waiting adapter counts per server over time' },
];

/** Saturation output, stored as format (pkg/models/diagnosis.go DiagnosisFormats); absent means both. */
export const SATURATION_FORMAT_OPTIONS: Array<{ value: VllmSaturationFormat; label: string; description: string }> = [
  {
    value: 'both',
    label: 'Series + table',
    description: 'Utilisation, arrivals vs completions, verdict timelines and the verdict table',
  },
  { value: 'table', label: 'Table only', description: 'The verdict per instance with its reason' },
  {
    value: 'series',
    label: 'Series only',
    description: 'Utilisation, arrivals vs completions and each verdict timeline',
  },
];

export const FLEET_FORMAT_OPTIONS = [{ value: 'table' }];

export const FAMILY_OPTIONS: Array<ComboboxOption<string>> = [
  { value: 'queue_time', label: 'Queue time', description: 'Time waiting for a scheduler slot' },
  { value: 'ttft', label: 'Time to first token' },
  { value: 'itl', label: 'Inter-token latency' },
  { value: 'e2e', label: 'End-to-end latency' },
  { value: 'prefill', label: 'Prefill time' },
  { value: 'decode', label: 'Decode time' },
  { value: 'inference', label: 'Inference time', description: 'Prefill plus decode' },
];

export const RANK_BY_OPTIONS: Array<ComboboxOption<string>> = [
  { value: 'waiting', label: 'Waiting requests' },
  { value: 'running', label: 'Running requests' },
  { value: 'kv_usage', label: 'KV-cache usage' },
  { value: 'wait_p99', label: 'Queue time p99' },
  { value: 'preemption_rate', label: 'Preemption rate' },
];

export const AGGREGATION_OPTIONS: Array<ComboboxOption<string>> = [
  { value: 'max', label: 'Max', description: 'Worst value over the time range' },
  { value: 'avg', label: 'Average' },
  { value: 'last', label: 'Last', description: 'Value at the end of the time range' },
];

export const GPU_SOURCE_OPTIONS: Array<{ value: VllmGpuSource; label: string; description: string }> = [
  { value: 'agents', label: 'Node agents', description: 'Ask every node agent now: current values' },
  { value: 'prometheus', label: 'Prometheus', description: "The agents' vllm_node_gpu_* series over the time range" },
  {
    value: 'dcgm',
    label: 'dcgm-exporter',
    description: "NVIDIA dcgm-exporter's DCGM_FI_* series, joined to the vLLM pods (Kubernetes)",
  },
];

export const GPU_FORMAT_OPTIONS: Array<{ value: VllmGpuFormat; label: string }> = [
  { value: 'table', label: 'Table' },
  { value: 'series', label: 'Time series' },
];

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
