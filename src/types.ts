import {
  DataSourceApi,
  DataSourceJsonData,
  LegacyMetricFindQueryOptions,
  MetricFindValue,
  QueryEditorProps,
  ScopedVars,
} from '@grafana/data';
import { DataQuery } from '@grafana/schema';

import { VllmQueryOptions, VllmQueryType } from './queryTypes.gen';

/**
 * What a query asks the backend for. The backend (pkg/) turns each kind into PromQL over the vLLM metrics,
 * so the frontend only carries intent; `promql` is the escape hatch for panels no vLLM query type covers.
 * The union is generated from the backend's table of query types (queryTypes.gen.ts, `go generate ./pkg/models/`).
 */
export type { VllmQueryType };

/**
 * How series are grouped:
 * - none: one fleet-wide series
 * - model: one series per served model
 * - instance: one series per vLLM server (the configured instance label)
 * - instance_engine: one series per engine inside a server (data-parallel engines)
 * - role: one series per prefill/decode role of a disaggregated fleet (the data source's roleLabel, or the labels the
 *   known stacks use); series without a role form one group
 */
export type VllmGrouping = 'none' | 'model' | 'instance' | 'instance_engine' | 'role';

/** Latency histograms a wait-time query can read (pkg/models Families); the backend defaults to queue_time. */
export type VllmWaitFamily = 'queue_time' | 'ttft' | 'itl' | 'e2e' | 'prefill' | 'decode' | 'inference';

/** Signals top-k can rank by (pkg/models RankSignals); the backend defaults to waiting. */
export type VllmRankSignal = 'waiting' | 'running' | 'kv_usage' | 'wait_p99' | 'preemption_rate';

/** How top-k folds a signal over the time range (pkg/models Aggregations); the backend defaults to max. */
export type VllmAggregation = 'max' | 'avg' | 'last';

/** GPU: where GPU numbers come from (node agents, or DCGM metrics in Prometheus); the backend defaults to agents. */
export type VllmGpuSource = 'agents' | 'prometheus' | 'dcgm';

/** GPU: one time series per GPU, or one table row per GPU with the latest values; the backend defaults to table. */
export type VllmGpuFormat = 'series' | 'table';

/** Wait time: quantile and mean series (default), or the latency family's distribution per step as a heatmap. */
export type VllmWaitFormat = 'series' | 'heatmap';

/** Top-k: the ranking table only, the series only, or both (the backend's default when format is absent). */
export type VllmTopKFormat = 'table' | 'series' | 'both';

/** Saturation: the verdict table, the series (utilisation, arrivals vs completions, verdict timelines), or both (default). Fleet is always a table. */
export type VllmSaturationFormat = 'both' | 'table' | 'series';

/** LoRA: one table row per server with its adapters now (default), or the adapter counts per server over time. */
export type VllmLoRAFormat = 'table' | 'series';

/** jsonData.containerLabels: cAdvisor's label names for a Kubernetes pod and container. */
export type VllmContainerLabels = 'kubelet' | 'legacy';

/** One jsonData.containerMap entry: a vLLM server's instance and its container's cgroup path (id) or name. */
export interface VllmContainerMapping {
  instance: string;
  id?: string;
  name?: string;
}

/** Container output: series per server, container and signal (the default) or one table row per container. */
export type VllmContainerFormat = 'series' | 'table';

/**
 * A reference to a dashboard variable ("$model", "${model}", "${model:raw}"). Option fields that are not free text
 * accept one so a dashboard can switch them; DataSource.applyTemplateVariables resolves it before the backend sees it.
 */
export type VariableRef = `$${string}`;

/**
 * The query JSON the backend parses (pkg/models/query.go rawQuery). Optional fields may be left out: the backend
 * fills in its defaults and rejects values outside the allowed sets with a message naming them. Every option field
 * of the query table comes from the generated VllmQueryOptions (typed by its kind); the fields below narrow and
 * document the ones the editor's shared code reads, and a type's own options component may narrow its own.
 */
export interface VllmQuery extends DataQuery, VllmQueryOptions {
  /** Narrows DataQuery.queryType (a free string) to the kinds the backend understands. */
  queryType: VllmQueryType;
  /** Defaults to instance; top-k only allows instance and instance_engine. */
  grouping?: VllmGrouping;
  /**
   * Filters: literal label values, never regexes. Each entry may hold dashboard variables; a multi-value variable
   * expands into several entries (see DataSource.applyTemplateVariables). Empty entries are rejected by the backend.
   */
  models?: string[];
  instances?: string[];
  engines?: string[];
  /**
   * Extra PromQL label matchers on any label, e.g. `namespace="inference", pod=~"vllm-.*"`, added to every vLLM
   * series selector of the query (and to every selector of a promql expression). Parsed by the backend with
   * Prometheus' parser; anything that is not label matchers is rejected naming this option. Dashboard variables
   * are resolved as in raw PromQL: `namespace=~"$namespace"` matches exactly the selected values.
   */
  matchers?: string;
  /**
   * Wait time and KV transfer: quantiles in (0, 1); the backend defaults to [0.5, 0.9, 0.99]. The backend wants numbers; an entry
   * may be a string only while it holds a dashboard variable ("$q"), which applyTemplateVariables turns into numbers.
   */
  quantiles?: Array<number | string>;
  /** Wait time: which latency histogram. SLO: the objective's histogram, one of VllmSloFamily. */
  family?: VllmWaitFamily | VariableRef;
  /** Wait time: add the wait of requests still queued (Little's law) instead of only finished ones. */
  live?: boolean;
  /** Top-k: how many to keep, whole number 1 to 100 (default 5). A string holds a variable ("$k"); the backend accepts numeric strings too. */
  k?: number | string;
  rankBy?: VllmRankSignal | VariableRef;
  aggregation?: VllmAggregation | VariableRef;
  /** Legend format: {{label}} is replaced by the series' label value. Dashboard variables are resolved first. */
  legend?: string;
  /** Min step, e.g. "30s", "$__rate_interval"; empty lets the backend pick the step from the time range. */
  interval?: string;
  /** Preemptions and top-k: return time series instead of annotations / series plus a ranking table. */
  asSeries?: boolean;
  /** Preemptions: the per-request distribution from vllm:request_num_preemptions (vLLM 0.30+) as series; implies asSeries. */
  perRequest?: boolean;
  /** GPU: where the numbers come from. */
  source?: VllmGpuSource;
  /**
   * GPU: time series or a table (default table). Top-k: "table" returns only the ranking table (for table panels),
   * "series" is the same as asSeries, absent or "both" returns both. Capacity: "table", "series" (the demand),
   * "whatif", "servers" (efficiency per server) or "both". Wait time: "series" (default) or "heatmap". The meaning differs
   * per type, so the editor drops it when switching between them.
   */
  format?:
    | VllmGpuFormat
    | VllmTopKFormat
    | VllmSaturationFormat
    | VllmLoRAFormat
    | VllmWaitFormat
    | VllmContainerFormat
    | 'whatif'
    | 'servers';
  /** PromQL: the expression (required). Dashboard variables are resolved; $__interval, $__rate_interval, $__range by the backend. */
  expr?: string;
  /** PromQL: Grafana unit of the result, e.g. reqps or short. */
  unit?: string;
  /**
   * SLO (pkg/models/slo.go): the latency threshold in seconds (snapped by the backend to the nearest bucket bound, with
   * a notice), the target share in (0, 1) and the compliance window ("28d"). Numbers may be strings holding a variable.
   */
  threshold?: number | string;
  target?: number | string;
  window?: string;
  /** SLO: return only these signals (e.g. one burn-rate pair for an alert rule); absent returns all. */
  signals?: VllmSloSignal[];
  /**
   * SLO: a latency objective (default; family and threshold apply) or an availability objective (the share of finished
   * requests not ending in error; family and threshold are ignored, the target defaults to 0.999).
   */
  objective?: VllmSloObjective;
  /** Workload (pkg/models/workload.go): token means and error share (default), or a length distribution heatmap. */
  view?: VllmWorkloadView | VariableRef;
}

/** SLO objective kinds (pkg/models SLOObjectives); the backend defaults to latency. */
export type VllmSloObjective = 'latency' | 'availability';

/** Workload views (pkg/models WorkloadViews); the backend defaults to tokens. */
export type VllmWorkloadView = 'tokens' | 'prompt' | 'generation';

/** Latency histograms an SLO can be set on (pkg/models SLOFamilies); the backend defaults to ttft. */
export type VllmSloFamily = 'ttft' | 'itl' | 'e2e' | 'queue_time';

/** The series an slo query returns (pkg/models SLOSignals). */
export type VllmSloSignal =
  'attainment' | 'error_budget_left' | 'burn_1h_5m' | 'burn_6h_30m' | 'burn_1d_2h' | 'burn_3d_6h';

/** What a new query starts with (see DataSource.getDefaultQuery). */
export const DEFAULT_QUERY: Partial<VllmQuery> = {
  queryType: 'queue',
  grouping: 'instance',
};

/**
 * What a new annotation query starts with: preemptions as events, the one query type whose result Grafana can turn
 * into annotations (a time and a text per event).
 */
export const DEFAULT_ANNOTATION_QUERY: Partial<VllmQuery> = {
  queryType: 'preemptions',
  asSeries: false,
};

/** What a query variable lists; each is one resource route of the backend (pkg/plugin/resource.go). */
export type VllmVariableResource = 'models' | 'instances' | 'engines' | 'clusters' | 'namespaces';

/**
 * A query variable's query. `models` narrows instances and engines, `instances` narrows engines; both may hold
 * dashboard variables (a chained variable such as instances of "$model").
 */
export interface VllmVariableQuery extends DataQuery {
  resource: VllmVariableResource;
  models?: string[];
  instances?: string[];
}

export const DEFAULT_VARIABLE_QUERY: VllmVariableQuery = { refId: 'VllmVariableQuery', resource: 'models' };

/**
 * Defaults the backend applies when a field is empty (pkg/models/settings.go). The config editor shows them as
 * placeholders instead of writing them, so a later change of default reaches data sources that never set one.
 */
export const DEFAULT_SETTINGS = {
  scrapeInterval: '15s',
  queryTimeout: '30s',
  instanceLabel: 'instance',
  metricPrefix: 'vllm:',
  prometheusUrl: 'http://localhost:9090',
  agentJob: 'vllm-node-agent',
  agentTimeout: '2s',
  maxConcurrentQueries: 10,
  incrementalQueryOverlapWindow: '10m',
  saturationKvHigh: 0.9,
  saturationQueue: 1,
  saturationPreemptions: 0.01,
  saturationIdle: 0.1,
  stallWindow: '3m',
  gpusPerServer: 1,
} as const;

export type VllmAgentMode = 'static' | 'discovery';

/**
 * The stack profiles the backend knows (jsonData.profile, pkg/models/profile.go). Absent means auto: the backend
 * applies the stack it detects; an explicit profile wins over detection.
 */
export type VllmProfile = 'auto' | 'prometheus' | 'production-stack' | 'llm-d' | 'kserve' | 'ray-serve';

export const PROFILE_OPTIONS: Array<{ label: string; value: VllmProfile; description: string }> = [
  { label: 'Auto', value: 'auto', description: 'detected from the vLLM series; Save & test names it' },
  { label: 'Prometheus', value: 'prometheus', description: 'instance targets; prefix vllm:' },
  { label: 'production-stack', value: 'production-stack', description: 'namespace/pod; router series excluded' },
  { label: 'llm-d', value: 'llm-d', description: 'namespace/pod (PodMonitors)' },
  { label: 'KServe', value: 'kserve', description: 'namespace/pod; kserve_vllm: and vllm: names' },
  { label: 'Ray Serve', value: 'ray-serve', description: 'namespace/ReplicaId; ray_vllm: and ray_vllm_ names' },
];

/** The recordingRules policies (pkg/models/rules.go). */
export type VllmRulesPolicy = 'exact' | 'nearest' | 'off';

/**
 * jsonData of a data-source instance: stored in plain text and sent to the browser.
 *
 * The Prometheus URL itself is the data source's `url` (written by DataSourceHttpSettings, which the backend
 * reads through the SDK's HTTP client options); `prometheusUrl` mirrors it for provisioning files and is the
 * backend's fallback when `url` is empty.
 */
export interface VllmDataSourceOptions extends DataSourceJsonData {
  prometheusUrl?: string;
  /** Prometheus' scrape interval, a duration such as 15s or 1m. */
  scrapeInterval?: string;
  /** Upper bound for each Prometheus request, a duration such as 30s. */
  queryTimeout?: string;
  /**
   * Serving stack (pkg/models/profile.go): sets the metric prefixes, the labels that identify one server
   * (namespace+pod on Kubernetes, namespace+ReplicaId on Ray Serve) and the series to exclude (production-stack's
   * router). instanceLabel and metricPrefix, when set, override it.
   */
  profile?: VllmProfile;
  /** Label that identifies one vLLM server (instance, or e.g. pod on Kubernetes). */
  instanceLabel?: string;
  /** Prefix of every vLLM metric name (vllm:, or ray_vllm: behind Ray Serve). */
  metricPrefix?: string;
  /**
   * Label holding each engine's prefill/decode role. Empty: llm_isvc_role (KServe) or llm_d_ai_role (llm-d's pod
   * label llm-d.ai/role as scraped), whichever the series carry.
   */
  roleLabel?: string;
  /**
   * Scopes the data source to one fleet in a shared store: PromQL label matchers such as
   * `cluster="eu-1", namespace="inference"`, added by the backend to every series selector it writes.
   */
  selector?: string;
  /** Most concurrent requests to Prometheus per data source (1 to 100; default 10); the rest queue in the plugin. */
  maxConcurrentQueries?: number;
  /**
   * Incremental querying (Grafana's Prometheus source's names): a refreshed range asks Prometheus only for the steps
   * after the last answer's moment minus the overlap window. Absent means on.
   */
  incrementalQuerying?: boolean;
  /** How far back from each fetch steps are asked for again (default 10m; at least the scrape interval). */
  incrementalQueryOverlapWindow?: string;
  /**
   * When queries are planned on the shipped recording rules (deploy/prometheus/rules/vllm-recording.rules.yml), used
   * when found: exact (where they answer exactly; also absent and true, as earlier versions wrote it), nearest (also
   * where they answer closely) or off (also false).
   */
  recordingRules?: VllmRulesPolicy | boolean;
  /** Prefix of the recording rules' series names (default engine:), for groups renamed on install. */
  rulePrefix?: string;
  /**
   * How cAdvisor names a Kubernetes pod and container: kubelet (pod, container; the default) or legacy (pod_name,
   * container_name: kubelets before 1.16).
   */
  containerLabels?: VllmContainerLabels;
  /**
   * Ties cAdvisor containers to vLLM servers where no label joins them (standalone cAdvisor, raw cgroups): each
   * entry names the server's instance label value and the container by cgroup path (id) or by name.
   */
  containerMap?: VllmContainerMapping[];

  /**
   * Which of the two ways to find node agents (GPU numbers) the editor shows. The backend does not read it: it uses
   * agentUrls when the list is non-empty and otherwise discovers the agents as the targets of the agentJob scrape
   * job (pkg/query/gpu.go). So the editor clears agentUrls when discovery is chosen, and when agentMode is absent
   * shows static for a non-empty list and discovery otherwise, i.e. what the backend will do.
   */
  agentMode?: VllmAgentMode;
  /** Static mode: base URLs of the node agents, e.g. http://gpu-node-1:9400. */
  agentUrls?: string[];
  /** Discovery mode: Prometheus job label of the agents' scrape job (default vllm-node-agent). */
  agentJob?: string;
  /**
   * Discovery mode: label matchers that scope the agents' targets, e.g. cluster="eu-1" ({} for none). Absent or blank:
   * the selector's matchers on cluster-wide labels (not namespace, pod and the like: the agents run elsewhere).
   */
  agentSelector?: string;
  /** Upper bound for each request to a node agent, a duration such as 2s. */
  agentTimeout?: string;

  /** Saturation: KV-cache usage (0–1] at or above which the cache is near full (default 0.9). */
  saturationKvHigh?: number;
  /** Saturation: mean queue (requests) over the rate window that counts as a queue (default 1). */
  saturationQueue?: number;
  /** Saturation: preemptions per second that count as preempting (default 0.01). */
  saturationPreemptions?: number;
  /** Saturation: running below this share (0–1] of the highest batch reached, with no queue, is idle (default 0.1). */
  saturationIdle?: number;
  /**
   * Stall window, a duration such as 3m (default 3m, at least two scrape intervals): an engine that is up with
   * requests running or waiting throughout it, and whose token and finished-request counters did not move over it,
   * is stalled. Absent means the backend default (two scrape intervals when that is longer).
   */
  stallWindow?: string;
  /** GPUs one vLLM server holds (tensor × pipeline parallel), 1–1024 (default 1): the capacity query's efficiency. */
  gpusPerServer?: number;
  /** What one GPU costs an hour, 0–10000 (unset: no cost columns in the capacity query). */
  gpuHourlyCost?: number;

  // Grafana's standard HTTP settings (written by DataSourceHttpSettings, read by the SDK's HTTPClientOptions).
  timeout?: number;
  keepCookies?: string[];
  oauthPassThru?: boolean;
  tlsAuth?: boolean;
  tlsAuthWithCACert?: boolean;
  tlsSkipVerify?: boolean;
  serverName?: string;
  /** Custom headers: httpHeaderName1, httpHeaderName2, …; the values live in secureJsonData.httpHeaderValueN. */
  [httpHeaderName: `httpHeaderName${number}`]: string | undefined;
}

/**
 * secureJsonData: write-only from the browser, encrypted by Grafana, only readable by the backend.
 * After saving, Grafana returns only secureJsonFields (which keys are set), never the values.
 */
export interface VllmSecureJsonData {
  basicAuthPassword?: string;
  tlsCACert?: string;
  tlsClientCert?: string;
  tlsClientKey?: string;
  /** Token the (later) node agents present to the plugin. */
  agentToken?: string;
  [httpHeaderValue: `httpHeaderValue${number}`]: string | undefined;
}

/**
 * What the editors and the query-variable support ask of the data source: the backend's resource routes and the
 * dashboard's variables. An option component that needs the fleet's names takes this, not the DataSource class:
 * the class imports the editors (through annotations.ts and variables.ts), so typing them with it would close an
 * import circle (src/imports.test.ts fails on one). DataSource (datasource.ts) implements it; tests can hand a
 * component a plain object with these methods.
 */
export interface VllmResourceApi {
  /** The dashboard's variables as "$name", offered next to the real values in the filter pickers. */
  getVariableRefs(): string[];
  /** Interpolates every entry of a filter list; a multi-value variable yields one entry per value. */
  interpolateList(entries: string[] | undefined, scopedVars?: ScopedVars): string[] | undefined;
  /** GET models: every served model name. */
  getModels(): Promise<string[]>;
  /** GET instances, optionally only those serving one of `models`. */
  getInstances(models?: string[]): Promise<string[]>;
  /** GET engines, optionally only those of `models` and `instances`. */
  getEngines(models?: string[], instances?: string[]): Promise<string[]>;
  /** Values of a query variable (models, instances, engines, clusters, namespaces). */
  metricFindQuery(
    query: VllmVariableQuery | string,
    options?: LegacyMetricFindQueryOptions
  ): Promise<MetricFindValue[]>;
}

/**
 * The data source as the editors see it: Grafana's DataSourceApi (QueryEditorProps requires one) plus the
 * resource methods above.
 */
export interface VllmDataSourceApi extends DataSourceApi<VllmQuery, VllmDataSourceOptions>, VllmResourceApi {
  // DataSourceApi declares it optional with an untyped query; ours always exists and takes a variable query.
  metricFindQuery(
    query: VllmVariableQuery | string,
    options?: LegacyMetricFindQueryOptions
  ): Promise<MetricFindValue[]>;
}

/** Props of a query editor of this data source; TVQuery is the variable editor's query type. */
export type VllmQueryEditorProps<TVQuery extends DataQuery = VllmQuery> = QueryEditorProps<
  VllmDataSourceApi,
  VllmQuery,
  VllmDataSourceOptions,
  TVQuery
>;
