import { DataSourceInstanceSettings, DataSourceSettings, ScopedVars, TypedVariableModel } from '@grafana/data';
import { TemplateSrv } from '@grafana/runtime';

import { DataSource } from '../datasource';
import { VllmDataSourceOptions, VllmSecureJsonData } from '../types';

/** A saved-looking data source as Grafana hands it to the config editor. */
export function makeSettings(
  overrides: Partial<DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData>> = {}
): DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData> {
  // `database` is required by the type but deprecated (Elasticsearch/InfluxDB only); Grafana sends "" for us.
  const base = {
    id: 1,
    uid: 'vllm-uid',
    orgId: 1,
    name: 'vLLM',
    typeLogoUrl: '',
    type: 'inferops-vllm-datasource',
    typeName: 'vLLM',
    access: 'proxy',
    url: '',
    user: '',
    basicAuth: false,
    basicAuthUser: '',
    isDefault: false,
    jsonData: {},
    secureJsonFields: {},
    readOnly: false,
    withCredentials: false,
  };
  return { ...(base as DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData>), ...overrides };
}

export function makeInstanceSettings(): DataSourceInstanceSettings<VllmDataSourceOptions> {
  return {
    uid: 'vllm-uid',
    type: 'inferops-vllm-datasource',
    name: 'vLLM',
    access: 'proxy',
    readOnly: false,
    jsonData: {},
    meta: {
      id: 'inferops-vllm-datasource',
      name: 'vLLM',
      type: 'datasource',
      backend: true,
      module: '',
      baseUrl: '',
      info: {
        author: { name: 'inferops' },
        description: '',
        links: [],
        logos: { small: '', large: '' },
        screenshots: [],
        updated: '',
        version: '',
      },
    },
  } as DataSourceInstanceSettings<VllmDataSourceOptions>;
}

/**
 * A stand-in for Grafana's TemplateSrv, faithful in the parts the data source relies on: `$name` and `${name}`
 * are looked up in scopedVars first, then in the dashboard variables; a format function receives the raw value
 * (an array for multi-value variables); without a format, arrays are rendered as a glob `{a,b}` like Grafana does;
 * unknown variables are left as they are.
 */
export class FakeTemplateSrv implements TemplateSrv {
  constructor(private readonly variables: Record<string, string | string[]>) {}

  /** The dashboard variables, by name; only `name` is filled in, which is all the editors read. */
  getVariables(): TypedVariableModel[] {
    return Object.keys(this.variables).map((name) => ({ name }) as unknown as TypedVariableModel);
  }

  containsTemplate(target?: string) {
    return /\$\w+|\$\{\w+\}/.test(target ?? '');
  }

  updateTimeRange() {}

  replace(target?: string, scopedVars?: ScopedVars, format?: string | Function): string {
    if (!target) {
      return target ?? '';
    }
    return target.replace(/\$(\w+)|\$\{(\w+)\}/g, (match: string, plain?: string, braced?: string) => {
      const name = (plain ?? braced) as string;
      const value = scopedVars?.[name] !== undefined ? scopedVars[name]!.value : this.variables[name];
      if (value === undefined) {
        return match;
      }
      if (typeof format === 'function') {
        return format(value);
      }
      return Array.isArray(value) ? `{${value.join(',')}}` : String(value);
    });
  }
}

/** What the fake backend's resource routes answer: a list per path, or a function of the query parameters. */
export type FakeResources = Record<string, string[] | ((params: Record<string, string[]>) => unknown)>;

/**
 * A DataSource whose resource routes answer from `resources` instead of the backend; unknown paths reject like the
 * backend's 404. The returned mock records every call (path and parameters).
 */
export function makeDataSource(resources: FakeResources = {}) {
  const ds = new DataSource(makeInstanceSettings());
  const getResource = jest.fn(async (path: string, params?: Record<string, string[]>) => {
    const answer = resources[path];
    if (answer === undefined) {
      throw new Error(`404: unknown resource path ${path}`);
    }
    return typeof answer === 'function' ? answer(params ?? {}) : answer;
  });
  ds.getResource = getResource as unknown as DataSource['getResource'];
  return { ds, getResource };
}
