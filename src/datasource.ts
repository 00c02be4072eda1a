import {
  CoreApp,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceInstanceSettings,
  LegacyMetricFindQueryOptions,
  LoadingState,
  MetricFindValue,
  ScopedVars,
} from '@grafana/data';
import { DataSourceWithBackend, getGrafanaLiveSrv, getTemplateSrv } from '@grafana/runtime';
import { map, merge, Observable, of } from 'rxjs';

import { annotationSupport } from './annotations';
import { isLive, liveAddress, liveBuffer } from './live';
import { validateQuery } from './queryValidation';
import { BACKEND_BUILTINS } from './queryOptions';
import { DEFAULT_QUERY, VllmDataSourceApi, VllmDataSourceOptions, VllmQuery, VllmVariableQuery } from './types';
import { normalizeVariableQuery } from './variableQuery';
import { VllmVariableSupport } from './variables';

/**
 * The browser side of the data source. Queries, health checks, alerting and annotations all run in the Go
 * backend; this class supplies defaults, resolves dashboard variables before a query is sent, and reads the
 * backend's resource routes (models, instances, engines) for the editors and query variables.
 */
export class DataSource extends DataSourceWithBackend<VllmQuery, VllmDataSourceOptions> implements VllmDataSourceApi {
  constructor(instanceSettings: DataSourceInstanceSettings<VllmDataSourceOptions>) {
    super(instanceSettings);
    // Annotation queries use the query editor and default to preemption events; they run through the normal
    // backend query path (QueryData, refId "Anno"). plugin.json sets "annotations": true.
    this.annotations = annotationSupport;
    this.variables = new VllmVariableSupport(this);
  }

  getDefaultQuery(_: CoreApp): Partial<VllmQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * Resolves dashboard variables in every string option. The backend never sees "$model": text options are
   * interpolated as text, each filter entry is expanded so that a multi-value variable becomes one entry per
   * selected value, and quantiles / k given as variables become numbers again. $__interval, $__rate_interval and
   * $__range stay: the backend derives them from the step it picks (pkg/interval), which the browser does not know.
   */
  applyTemplateVariables(query: VllmQuery, scopedVars: ScopedVars): VllmQuery {
    const replace = (text: string | undefined) => (text === undefined ? undefined : replaceText(text, scopedVars));
    return {
      ...query,
      legend: replace(query.legend),
      interval: replace(query.interval),
      expr: query.expr === undefined ? undefined : replaceText(query.expr, scopedVars, promqlFormat),
      family: replace(query.family) as VllmQuery['family'],
      rankBy: replace(query.rankBy) as VllmQuery['rankBy'],
      aggregation: replace(query.aggregation) as VllmQuery['aggregation'],
      k: typeof query.k === 'string' ? toNumberIfNumeric(replace(query.k) ?? '') : query.k,
      worst: typeof query.worst === 'string' ? toNumberIfNumeric(replace(query.worst) ?? '') : query.worst,
      threshold:
        typeof query.threshold === 'string' ? toNumberIfNumeric(replace(query.threshold) ?? '') : query.threshold,
      target: typeof query.target === 'string' ? toNumberIfNumeric(replace(query.target) ?? '') : query.target,
      window: replace(query.window),
      view: replace(query.view) as VllmQuery['view'],
      quantiles: query.quantiles?.flatMap((q) =>
        typeof q === 'number' ? [q] : expandEntry(q, scopedVars).map(toNumberIfNumeric)
      ),
      models: this.interpolateList(query.models, scopedVars),
      instances: this.interpolateList(query.instances, scopedVars),
      engines: this.interpolateList(query.engines, scopedVars),
      matchers: query.matchers === undefined ? undefined : replaceText(query.matchers, scopedVars, promqlFormat),
    };
  }

  /**
   * Queue and fleet queries with `live` on are streamed from the backend's Grafana Live channel (src/live.ts), one
   * stream per query; every other query goes to the backend as usual. Both are merged into one response stream, as
   * Grafana's streaming data source guide does.
   */
  query(request: DataQueryRequest<VllmQuery>): Observable<DataQueryResponse> {
    const live = request.targets.filter((t) => !t.hide && isLive(t));
    if (live.length === 0) {
      return super.query(request);
    }
    const streams = live.map((target) => this.stream(request, target));
    const polled = request.targets.filter((t) => !isLive(t));
    if (polled.length > 0) {
      streams.push(super.query({ ...request, targets: polled }));
    }
    return merge(...streams);
  }

  /** One live query's stream, its variables resolved; a query the backend would refuse is an error, not a channel. */
  private stream(request: DataQueryRequest<VllmQuery>, target: VllmQuery): Observable<DataQueryResponse> {
    const query = this.applyTemplateVariables(target, request.scopedVars);
    const errors = Object.entries(validateQuery(query));
    if (errors.length > 0) {
      const message = errors.map(([field, error]) => `${field}: ${error}`).join('; ');
      return of({ data: [], key: target.refId, state: LoadingState.Error, errors: [{ message, refId: target.refId }] });
    }
    return getGrafanaLiveSrv()
      .getDataStream({
        addr: liveAddress(this.uid, query),
        key: `${request.requestId}-${target.refId}`,
        buffer: liveBuffer(query, request.maxDataPoints),
      })
      .pipe(
        map((response) => ({
          ...response,
          key: target.refId,
          data: response.data.map((frame) => ({ ...frame, refId: target.refId })),
        }))
      );
  }

  /** Hidden queries ("eye" toggled off) are not sent to the backend. */
  filterQuery(query: VllmQuery): boolean {
    return !query.hide;
  }

  /**
   * Interpolates every entry of a filter list and flattens the result. Single values are substituted as they are;
   * a multi-value variable yields one entry per value (also inside text: "gpu-$n" with n = 1,2 gives "gpu-1",
   * "gpu-2"), and an empty selection yields no entry. Duplicates are dropped, order is kept.
   */
  interpolateList(entries: string[] | undefined, scopedVars: ScopedVars = {}): string[] | undefined {
    if (!entries) {
      return entries;
    }
    const out = entries.flatMap((entry) => expandEntry(entry, scopedVars));
    return Array.from(new Set(out));
  }

  /** The dashboard's variables as "$name", offered next to the real values in the filter pickers. */
  getVariableRefs(): string[] {
    return getTemplateSrv()
      .getVariables()
      .map((v) => `$${v.name}`);
  }

  /** GET models: every served model name. */
  getModels(): Promise<string[]> {
    return this.getList('models', {});
  }

  /** GET instances, optionally only those serving one of `models`. */
  getInstances(models?: string[]): Promise<string[]> {
    return this.getList('instances', nonEmpty({ model: models }));
  }

  /** GET engines, optionally only those of `models` and `instances`. */
  getEngines(models?: string[], instances?: string[]): Promise<string[]> {
    return this.getList('engines', nonEmpty({ model: models, instance: instances }));
  }

  /**
   * Values of a query variable (see VllmVariableSupport). The narrowing lists may hold variables, which are
   * resolved first, so "instances of $model" follows the model variable.
   */
  async metricFindQuery(
    query: VllmVariableQuery | string,
    options?: LegacyMetricFindQueryOptions
  ): Promise<MetricFindValue[]> {
    const q = normalizeVariableQuery(query);
    const scopedVars = options?.scopedVars ?? {};
    const models = this.interpolateList(q.models, scopedVars);
    const instances = this.interpolateList(q.instances, scopedVars);
    let values: string[];
    switch (q.resource) {
      case 'instances':
        values = await this.getInstances(models);
        break;
      case 'engines':
        values = await this.getEngines(models, instances);
        break;
      case 'clusters':
      case 'namespaces':
        values = await this.getList(q.resource, {});
        break;
      default:
        values = await this.getModels();
    }
    return values.map((v) => ({ text: v, value: v }));
  }

  /** Reads one resource route and insists on a JSON string array, so a proxy's HTML error page is not shown as options. */
  private async getList(path: string, params: Record<string, string[]>): Promise<string[]> {
    const body: unknown = await this.getResource(path, params);
    if (!Array.isArray(body)) {
      throw new Error(`resource ${path}: expected a JSON array of strings`);
    }
    return body.filter((v): v is string => typeof v === 'string');
  }
}

/** Query parameters without empty lists; Grafana sends an array as repeated parameters (model=a&model=b). */
function nonEmpty(params: Record<string, string[] | undefined>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(params)) {
    if (values && values.length > 0) {
      out[key] = values;
    }
  }
  return out;
}

/** Marks where a variable's values go in a half-interpolated entry; control characters never occur in names. */
const SLOT = '\u0000';

/**
 * Interpolates text the way Grafana does, except for the built-ins the backend resolves itself ($__interval,
 * $__rate_interval, $__range, …): they are parked in numbered slots and put back after interpolation.
 */
function replaceText(text: string, scopedVars: ScopedVars, format?: (value: unknown) => string): string {
  const kept: string[] = [];
  const masked = text.replace(BACKEND_BUILTINS, (builtin) => {
    kept.push(builtin);
    return `${SLOT}${kept.length - 1}${SLOT}`;
  });
  const replaced = getTemplateSrv().replace(masked, scopedVars, format);
  return kept.length === 0 ? replaced : replaced.replace(/\u0000(\d+)\u0000/g, (_, i: string) => kept[Number(i)]);
}

/** Escapes text for a double-quoted PromQL string. */
function escapePromString(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/**
 * Formats a variable inside raw PromQL as Grafana's Prometheus data source does: one value is escaped for the
 * PromQL string it stands in; several values (a multi-value variable, or All) become a regex alternation of
 * regex-escaped values, escaped again for the string, so `model_name=~"$model"` matches exactly the selection.
 */
export function promqlFormat(value: unknown): string {
  if (!Array.isArray(value)) {
    return escapePromString(String(value));
  }
  const alternatives = value.map((v) => escapePromString(String(v).replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')));
  return `(${alternatives.join('|')})`;
}

/** A variable may resolve to "0.99" or "10": send a number, as the backend expects, when it is one. */
function toNumberIfNumeric(text: string): number | string {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : text;
}

function expandEntry(entry: string, scopedVars: ScopedVars): string[] {
  // A custom format function receives each variable's raw value (an array for multi-value variables). Instead
  // of joining the values into a regex or glob, park them aside and leave a numbered slot in the text.
  const slots: string[][] = [];
  const template = getTemplateSrv().replace(entry, scopedVars, (value: unknown) => {
    const values = Array.isArray(value)
      ? value.map(String)
      : [value === undefined || value === null ? '' : String(value)];
    slots.push(values);
    return `${SLOT}${slots.length - 1}${SLOT}`;
  });

  // template alternates literal text (even indexes) and slot numbers (odd indexes); build the cross product.
  let results = [''];
  template.split(SLOT).forEach((part, i) => {
    if (i % 2 === 0) {
      results = results.map((prefix) => prefix + part);
    } else {
      const values = slots[Number(part)];
      results = results.flatMap((prefix) => values.map((v) => prefix + v));
    }
  });
  return results.filter((r) => r !== '');
}
