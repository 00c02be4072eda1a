/*
 * The stand-ins the browser check mounts the editors with: a DataSource whose resource routes answer canned lists
 * (what the Go backend's CallResource would send), and a template service with a few dashboard variables.
 */
import { DataSourceInstanceSettings, DataSourceSettings } from '@grafana/data';
import { setTemplateSrv } from '@grafana/runtime';

import { DataSource } from '../../src/datasource';
import { FakeTemplateSrv } from '../../src/testing/fixtures';
import { VllmDataSourceOptions, VllmSecureJsonData } from '../../src/types';

export const CANNED: Record<string, string[]> = {
  models: ['llama-3-8b', 'mistral-7b', 'qwen-72b'],
  instances: ['gpu-a:8000', 'gpu-b:8000', 'gpu-c:8000'],
  engines: ['0', '1'],
};

/** Every resource call the page made, for the driver script to check. */
export const resourceCalls: Array<{ path: string; params: unknown }> = [];

export function makeFakeDataSource(): DataSource {
  const settings = {
    uid: 'vllm-e2e',
    type: 'inferops-vllm-datasource',
    name: 'vLLM (fake backend)',
    access: 'proxy',
    readOnly: false,
    jsonData: {},
    meta: { id: 'inferops-vllm-datasource', name: 'vLLM', type: 'datasource', backend: true, info: {} },
  } as unknown as DataSourceInstanceSettings<VllmDataSourceOptions>;
  const ds = new DataSource(settings);
  // Same contract as pkg/plugin/resource.go: a JSON string array per known path, 404 for anything else.
  ds.getResource = (async (path: string, params?: unknown) => {
    resourceCalls.push({ path, params });
    await new Promise((resolve) => setTimeout(resolve, 50)); // a little latency, like a real round trip
    if (!(path in CANNED)) {
      throw new Error(`404 unknown resource path ${path}`);
    }
    return CANNED[path];
  }) as DataSource['getResource'];
  return ds;
}

export function installTemplateVariables() {
  setTemplateSrv(new FakeTemplateSrv({ model: 'llama-3-8b', instance: ['gpu-a:8000', 'gpu-b:8000'] }));
}

export function initialSettings(): DataSourceSettings<VllmDataSourceOptions, VllmSecureJsonData> {
  return {
    id: 1,
    uid: 'vllm-e2e',
    orgId: 1,
    name: 'vLLM',
    typeLogoUrl: '',
    type: 'inferops-vllm-datasource',
    typeName: 'vLLM',
    access: 'proxy',
    url: 'http://prometheus:9090',
    user: '',
    basicAuth: false,
    basicAuthUser: '',
    isDefault: false,
    database: '',
    jsonData: { agentUrls: ['http://gpu-node-1:9400'] },
    secureJsonFields: { agentToken: true },
    readOnly: false,
    withCredentials: false,
  };
}
