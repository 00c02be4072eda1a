import { DataSourceJsonData } from '@grafana/data';
import { DataQuery } from '@grafana/schema';

/**
 * What a query asks the backend for. The backend (pkg/) turns each kind into PromQL over the vLLM metrics,
 * so the frontend only carries intent, never PromQL.
 */
export type VllmQueryType = 'queue' | 'waitTime' | 'preemptions' | 'topk' | 'gpu';

/**
 * How series are grouped:
 * - none: one fleet-wide series
 * - model: one series per served model
 * - instance: one series per vLLM server (the configured instance label)
 * - instance_engine: one series per engine inside a server (data-parallel engines)
 */
export type VllmGrouping = 'none' | 'model' | 'instance' | 'instance_engine';

/** Latency histograms a wait-time query can read (pkg/models/query.go Families); the backend defaults to queue_time. */
export type VllmWaitFamily = 'queue_time' | 'ttft' | 'itl' | 'e2e' | 'prefill' | 'decode' | 'inference';

/** Signals top-k can rank by (pkg/models/query.go RankSignals); the backend defaults to waiting. */
export type VllmRankSignal = 'waiting' | 'running' | 'kv_usage' | 'wait_p99' | 'preemption_rate';

/** How top-k folds a signal over the time range (pkg/models/query.go Aggregations); the backend defaults to max. */
export type VllmAggregation = 'max' | 'avg' | 'last';

/**
 * The query JSON the backend parses (pkg/models/query.go rawQuery). Optional fields may be left out: the backend
 * fills in its defaults and rejects values outside the allowed sets with a message naming them.
 */
export interface VllmQuery extends DataQuery {
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
  /** Wait time: quantiles in (0, 1); the backend defaults to [0.5, 0.9, 0.99]. */
  quantiles?: number[];
  /** Wait time: which latency histogram. */
  family?: VllmWaitFamily;
  /** Wait time: stream live values instead of a one-off range query. */
  live?: boolean;
  /** Top-k: how many to keep, 1 to 100 (default 5). */
  k?: number;
  rankBy?: VllmRankSignal;
  aggregation?: VllmAggregation;
  /** Legend format: {{label}} is replaced by the series' label value. Dashboard variables are resolved first. */
  legend?: string;
  /** Preemptions and top-k: return time series instead of annotations / a table. */
  asSeries?: boolean;
}

/** What a new query starts with (see DataSource.getDefaultQuery). */
export const DEFAULT_QUERY: Partial<VllmQuery> = {
  queryType: 'queue',
  grouping: 'instance',
};

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
} as const;

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
  /** Label that identifies one vLLM server (instance, or e.g. pod on Kubernetes). */
  instanceLabel?: string;
  /** Prefix of every vLLM metric name (vllm:, or ray_vllm: behind Ray Serve). */
  metricPrefix?: string;

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
