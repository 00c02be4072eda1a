/*
 * Loads the production bundle (dist/module.js, written by `npm run build`) the way Grafana does: as an AMD module
 * whose dependencies are Grafana's own copies of React, @grafana/* and rxjs. Checks that it exports a
 * DataSourcePlugin wired to the editors, and that those editors render. Run after the build:
 * `npm run test:dist` (jest.dist.config.js); scripts/frontend-check.sh does.
 */
import fs from 'fs';
import path from 'path';
import React from 'react';
import { render, screen } from '@testing-library/react';
import { DataSourceInstanceSettings, DataSourcePlugin } from '@grafana/data';
import { setTemplateSrv } from '@grafana/runtime';

import type { DataSource } from '../src/datasource';
import type { VllmDataSourceOptions } from '../src/types';
import { FakeTemplateSrv } from '../src/testing/fixtures';

const MODULE = path.resolve(__dirname, '..', 'dist', 'module.js');

/** What Grafana provides to plugins under these names (.config/bundler/externals.ts lists what the bundle may ask for). */
const PROVIDED: Record<string, unknown> = {
  react: React,
  'react-dom': require('react-dom'),
  // @grafana/plugin-ui's settings sections style themselves with it; Grafana shares its copy with plugins.
  '@emotion/css': require('@emotion/css'),
  '@grafana/data': require('@grafana/data'),
  '@grafana/runtime': require('@grafana/runtime'),
  '@grafana/ui': require('@grafana/ui'),
  rxjs: require('rxjs'),
  module: { uri: '/public/plugins/inferops-vllm-datasource/module.js' },
};

function loadBundle(): Record<string, unknown> {
  const source = fs.readFileSync(MODULE, 'utf8');
  let exported: Record<string, unknown> | undefined;
  const define = (deps: string[], factory: (...args: unknown[]) => Record<string, unknown>) => {
    const missing = deps.filter((d) => !(d in PROVIDED));
    if (missing.length) {
      throw new Error(`dist/module.js asks for modules Grafana does not provide here: ${missing.join(', ')}`);
    }
    exported = factory(...deps.map((d) => PROVIDED[d]));
  };
  define.amd = true;
  // The bundle is one `define([...], factory)` call (webpack output.library.type = 'amd').
  new Function('define', source)(define);
  if (!exported) {
    throw new Error('dist/module.js did not call define()');
  }
  return exported;
}

const instanceSettings = {
  uid: 'vllm',
  type: 'inferops-vllm-datasource',
  name: 'vLLM',
  access: 'proxy',
  readOnly: false,
  jsonData: {},
  meta: { id: 'inferops-vllm-datasource', name: 'vLLM', type: 'datasource', backend: true, info: {} },
} as unknown as DataSourceInstanceSettings<VllmDataSourceOptions>;

describe('dist/module.js', () => {
  // A type only: the class under test comes from the bundle, never from src/.
  let plugin: DataSourcePlugin<DataSource>;

  beforeAll(() => {
    setTemplateSrv(new FakeTemplateSrv({}));
    if (!fs.existsSync(MODULE)) {
      throw new Error(`${MODULE} is missing: run npm run build first`);
    }
    plugin = loadBundle().plugin as DataSourcePlugin<DataSource>;
  });

  it('exports a DataSourcePlugin with a config and a query editor', () => {
    expect(plugin).toBeInstanceOf(DataSourcePlugin);
    expect(plugin.components.ConfigEditor).toEqual(expect.any(Function));
    expect(plugin.components.QueryEditor).toEqual(expect.any(Function));
  });

  it('creates data sources with annotation and variable editors', () => {
    const ds = new plugin.DataSourceClass(instanceSettings);
    expect(ds.annotations?.QueryEditor).toEqual(expect.any(Function));
    expect(ds.annotations?.getDefaultQuery?.()).toEqual({ queryType: 'preemptions', asSeries: false });
    expect(ds.variables?.getType()).toBe('custom');
    expect(ds.variables && 'editor' in ds.variables && ds.variables.editor).toEqual(expect.any(Function));
    expect(ds.getDefaultQuery?.('dashboard' as never)).toEqual({ queryType: 'queue', grouping: 'instance' });
  });

  it('renders the bundled editors', () => {
    const ds = new plugin.DataSourceClass(instanceSettings);
    const ConfigEditor = plugin.components.ConfigEditor!;
    const QueryEditor = plugin.components.QueryEditor!;
    const settings = { ...instanceSettings, jsonData: {}, secureJsonFields: {}, url: '' } as never;
    render(<ConfigEditor options={settings} onOptionsChange={jest.fn()} />);
    expect(screen.getByLabelText('Scrape interval')).toBeInTheDocument();
    // The stack profile defaults to auto; the node agents' section starts collapsed while it holds no setting.
    expect(screen.getByRole('radio', { name: 'Auto' })).toBeChecked();
    expect(screen.getByRole('button', { name: 'Expand section Node agents' })).toBeInTheDocument();

    render(
      <QueryEditor
        datasource={ds}
        query={{ refId: 'A', queryType: 'topk' } as never}
        onChange={jest.fn()}
        onRunQuery={jest.fn()}
      />
    );
    expect(screen.getByLabelText('Query')).toHaveValue('Top-k');
    expect(screen.getByLabelText('Rank by')).toHaveValue('Waiting requests');
  });
});
