import { CoreApp, DataSourceInstanceSettings, ScopedVars } from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv } from '@grafana/runtime';

import { DEFAULT_QUERY, VllmDataSourceOptions, VllmQuery } from './types';

/**
 * The browser side of the data source. Queries, health checks, alerting and annotations all run in the Go
 * backend; this class only supplies defaults and resolves dashboard variables before a query is sent.
 */
export class DataSource extends DataSourceWithBackend<VllmQuery, VllmDataSourceOptions> {
  constructor(instanceSettings: DataSourceInstanceSettings<VllmDataSourceOptions>) {
    super(instanceSettings);
    // An empty AnnotationSupport makes Grafana offer this data source for annotations and send the annotation
    // query through the normal backend query path (QueryData, refId "Anno"); plugin.json sets "annotations": true.
    this.annotations = {};
  }

  getDefaultQuery(_: CoreApp): Partial<VllmQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * Resolves dashboard variables. The backend never sees "$model": the legend is interpolated as text, and each
   * filter entry is expanded so that a multi-value variable becomes one entry per selected value.
   */
  applyTemplateVariables(query: VllmQuery, scopedVars: ScopedVars): VllmQuery {
    const templateSrv = getTemplateSrv();
    return {
      ...query,
      legend: query.legend === undefined ? undefined : templateSrv.replace(query.legend, scopedVars),
      models: expandEntries(query.models, scopedVars),
      instances: expandEntries(query.instances, scopedVars),
      engines: expandEntries(query.engines, scopedVars),
    };
  }

  /** Hidden queries ("eye" toggled off) are not sent to the backend. */
  filterQuery(query: VllmQuery): boolean {
    return !query.hide;
  }
}

/** Marks where a variable's values go in a half-interpolated entry; control characters never occur in names. */
const SLOT = '\u0000';

/**
 * Interpolates every entry of a filter list and flattens the result. Single values are substituted as they are;
 * a multi-value variable yields one entry per value (also inside text: "gpu-$n" with n = 1,2 gives "gpu-1",
 * "gpu-2"), and an empty selection yields no entry. Duplicates are dropped, order is kept.
 */
function expandEntries(entries: string[] | undefined, scopedVars: ScopedVars): string[] | undefined {
  if (!entries) {
    return entries;
  }
  const out = entries.flatMap((entry) => expandEntry(entry, scopedVars));
  return Array.from(new Set(out));
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
