import { CoreApp, DataQueryRequest } from '@grafana/data';
import { setTemplateSrv } from '@grafana/runtime';
import { lastValueFrom } from 'rxjs';

import { DataSource } from './datasource';
import { annotationSupport } from './annotations';
import { DEFAULT_QUERY, VllmQuery, VllmVariableQuery } from './types';
import { VllmVariableSupport } from './variables';
import { FakeTemplateSrv, makeDataSource, makeInstanceSettings } from './testing/fixtures';

const baseQuery: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model' };

beforeEach(() => {
  setTemplateSrv(
    new FakeTemplateSrv({
      model: 'llama-3-8b', // single-value variable
      models: ['llama-3-8b', 'mistral-7b'], // multi-value variable
      node: ['1', '2'],
      none: [], // multi-value variable with nothing selected
      host: 'gpu-a',
      q: '0.95',
      qs: ['0.5', '0.99'],
      k: '10',
      family: 'ttft',
      signal: 'kv_usage',
      agg: 'avg',
      step: '1m',
    })
  );
});

describe('DataSource', () => {
  let ds: DataSource;
  beforeEach(() => {
    ds = new DataSource(makeInstanceSettings());
  });

  it('supports annotations with the query editor, defaulting to preemptions', () => {
    expect(ds.annotations).toBe(annotationSupport);
    expect(ds.annotations?.QueryEditor).toBeDefined();
    expect(ds.annotations?.getDefaultQuery?.()).toEqual({ queryType: 'preemptions', asSeries: false });
  });

  it('supports query variables with a custom editor', () => {
    expect(ds.variables).toBeInstanceOf(VllmVariableSupport);
  });

  it('defaults new queries to queue depth per instance', () => {
    expect(ds.getDefaultQuery(CoreApp.Dashboard)).toEqual(DEFAULT_QUERY);
    expect(DEFAULT_QUERY).toEqual({ queryType: 'queue', grouping: 'instance' });
  });

  it('lists the dashboard variables as $name', () => {
    expect(ds.getVariableRefs()).toContain('$model');
    expect(ds.getVariableRefs()).toContain('$step');
  });

  it('filters out hidden queries only', () => {
    expect(ds.filterQuery({ ...baseQuery, hide: true })).toBe(false);
    expect(ds.filterQuery({ ...baseQuery, hide: false })).toBe(true);
    expect(ds.filterQuery(baseQuery)).toBe(true);
  });

  describe('applyTemplateVariables', () => {
    it('substitutes a single-value variable in filters and legend', () => {
      const out = ds.applyTemplateVariables(
        { ...baseQuery, models: ['$model'], instances: ['${host}:8000'], legend: '$host / {{model}}' },
        {}
      );
      expect(out.models).toEqual(['llama-3-8b']);
      expect(out.instances).toEqual(['gpu-a:8000']);
      expect(out.legend).toBe('gpu-a / {{model}}');
    });

    it('expands a multi-value variable into one entry per value', () => {
      const out = ds.applyTemplateVariables({ ...baseQuery, models: ['$models', 'qwen-72b'] }, {});
      expect(out.models).toEqual(['llama-3-8b', 'mistral-7b', 'qwen-72b']);
    });

    it('expands a multi-value variable inside surrounding text', () => {
      const out = ds.applyTemplateVariables({ ...baseQuery, instances: ['gpu-$node:8000'] }, {});
      expect(out.instances).toEqual(['gpu-1:8000', 'gpu-2:8000']);
    });

    it('drops duplicates and entries of an empty selection', () => {
      const out = ds.applyTemplateVariables({ ...baseQuery, models: ['$model', '$models', '$none'] }, {});
      expect(out.models).toEqual(['llama-3-8b', 'mistral-7b']);
    });

    it('prefers scoped variables (repeated panels) over dashboard ones', () => {
      const out = ds.applyTemplateVariables(
        { ...baseQuery, engines: ['$engine'], models: ['$model'] },
        { model: { text: 'phi-3', value: 'phi-3' }, engine: { text: '0', value: ['0', '1'] } }
      );
      expect(out.models).toEqual(['phi-3']);
      expect(out.engines).toEqual(['0', '1']);
    });

    it('interpolates label matchers as PromQL: one value escaped, several values as an exact regex alternation', () => {
      const one = ds.applyTemplateVariables({ ...baseQuery, matchers: 'namespace="$host"' }, {});
      expect(one.matchers).toBe('namespace="gpu-a"');
      const many = ds.applyTemplateVariables({ ...baseQuery, matchers: 'cluster="x", model_name=~"$models"' }, {});
      expect(many.matchers).toBe('cluster="x", model_name=~"(llama-3-8b|mistral-7b)"');
      const quoted = ds.applyTemplateVariables(
        { ...baseQuery, matchers: 'team="$t"' },
        { t: { text: 'a"b', value: 'a"b' } }
      );
      expect(quoted.matchers).toBe('team="a\\"b"');
      expect(ds.applyTemplateVariables(baseQuery, {}).matchers).toBeUndefined();
    });

    it('interpolates the wait-time options and turns quantile variables into numbers', () => {
      const out = ds.applyTemplateVariables(
        { refId: 'A', queryType: 'waitTime', quantiles: [0.5, '$q', '$qs'], family: '$family' },
        {}
      );
      expect(out.quantiles).toEqual([0.5, 0.95, 0.5, 0.99]);
      expect(out.family).toBe('ttft');
    });

    it('interpolates the top-k options and turns k into a number', () => {
      const out = ds.applyTemplateVariables(
        { refId: 'A', queryType: 'topk', k: '$k', rankBy: '$signal', aggregation: '$agg' },
        {}
      );
      expect(out.k).toBe(10);
      expect(out.rankBy).toBe('kv_usage');
      expect(out.aggregation).toBe('avg');
    });

    it('leaves a k or quantile that does not resolve to a number for the backend to reject by name', () => {
      const out = ds.applyTemplateVariables({ refId: 'A', queryType: 'topk', k: '$unknown', quantiles: ['$host'] }, {});
      expect(out.k).toBe('$unknown');
      expect(out.quantiles).toEqual(['gpu-a']);
    });

    it('interpolates the min step but leaves the built-in intervals to the backend', () => {
      expect(ds.applyTemplateVariables({ ...baseQuery, interval: '$step' }, {}).interval).toBe('1m');
      // Grafana's request carries browser values for some built-ins; the backend's own step must win.
      const scoped = { __interval: { text: '15s', value: '15s' }, __range: { text: '1h', value: '1h' } };
      for (const builtin of ['$__interval', '${__interval}', '$__rate_interval', '${__rate_interval}']) {
        expect(ds.applyTemplateVariables({ ...baseQuery, interval: builtin }, scoped).interval).toBe(builtin);
      }
    });

    it('interpolates a PromQL expression, keeping the built-ins the backend resolves', () => {
      const scoped = { __interval: { text: '15s', value: '15s' }, __range: { text: '1h', value: '1h' } };
      const out = ds.applyTemplateVariables(
        {
          refId: 'A',
          queryType: 'promql',
          expr: 'sum(rate(x{model="$model", host="${host}"}[$__rate_interval])) / $__interval_ms + ${__range} + $__range_s',
          unit: 'reqps',
        },
        scoped
      );
      expect(out.expr).toBe(
        'sum(rate(x{model="llama-3-8b", host="gpu-a"}[$__rate_interval])) / $__interval_ms + ${__range} + $__range_s'
      );
      expect(out.unit).toBe('reqps');
    });

    it('formats variables in PromQL as Prometheus strings and regex alternations', () => {
      const scoped = {
        model: { text: 'All', value: ['meta-llama/Llama-3.1-8B', 'a"b'] },
        one: { text: 'x', value: 'c\\d."e' },
      };
      const out = ds.applyTemplateVariables(
        { refId: 'A', queryType: 'promql', expr: 'up{model_name=~"$model", x="${one}"}' },
        scoped
      );
      expect(out.expr).toBe('up{model_name=~"(meta-llama/Llama-3\\\\.1-8B|a\\"b)", x="c\\\\d.\\"e"}');
    });

    it('keeps unknown variables and leaves other fields alone', () => {
      const query: VllmQuery = { ...baseQuery, models: ['$unknown'], k: 5, quantiles: [0.5, 0.99], live: true };
      const out = ds.applyTemplateVariables(query, {});
      expect(out).toEqual({ ...query, models: ['$unknown'] });
      expect(query.models).toEqual(['$unknown']); // input not mutated
    });
  });
});

describe('DataSource resource routes', () => {
  it('reads models, instances and engines with repeated narrowing parameters', async () => {
    const { ds, getResource } = makeDataSource({ models: ['m1'], instances: ['i1'], engines: ['0'] });
    await expect(ds.getModels()).resolves.toEqual(['m1']);
    await expect(ds.getInstances(['m1', 'm2'])).resolves.toEqual(['i1']);
    await expect(ds.getEngines(['m1'], ['i1'])).resolves.toEqual(['0']);
    await ds.getEngines([], undefined);
    expect(getResource.mock.calls).toEqual([
      ['models', {}],
      ['instances', { model: ['m1', 'm2'] }],
      ['engines', { model: ['m1'], instance: ['i1'] }],
      ['engines', {}], // empty lists are not sent
    ]);
  });

  it('rejects an answer that is not a string array and drops non-strings', async () => {
    const { ds } = makeDataSource({ models: () => ({ error: 'x' }), instances: () => ['a', 1, null, 'b'] });
    await expect(ds.getModels()).rejects.toThrow('expected a JSON array of strings');
    await expect(ds.getInstances()).resolves.toEqual(['a', 'b']);
  });

  it('passes a backend error through', async () => {
    const { ds } = makeDataSource({});
    await expect(ds.getModels()).rejects.toThrow('404');
  });
});

describe('query variables', () => {
  const resources = {
    models: ['llama-3-8b', 'mistral-7b'],
    instances: (p: Record<string, string[]>) => (p.model ? p.model.map((m) => `${m}-host`) : ['all-hosts']),
    engines: (p: Record<string, string[]>) => [`engines of ${JSON.stringify(p)}`],
    clusters: ['eu-1', 'us-1'],
    namespaces: [],
  };

  it.each<[VllmVariableQuery | string, string[]]>([
    [{ refId: 'V', resource: 'models' }, ['llama-3-8b', 'mistral-7b']],
    [{ refId: 'V', resource: 'instances' }, ['all-hosts']],
    [{ refId: 'V', resource: 'instances', models: ['$models'] }, ['llama-3-8b-host', 'mistral-7b-host']],
    [
      { refId: 'V', resource: 'engines', models: ['$model'], instances: ['gpu-$node'] },
      ['engines of {"model":["llama-3-8b"],"instance":["gpu-1","gpu-2"]}'],
    ],
    [{ refId: 'V', resource: 'clusters' }, ['eu-1', 'us-1']],
    [{ refId: 'V', resource: 'namespaces' }, []], // a fleet without the label: an empty list, the variable matches ""
    ['instances', ['all-hosts']], // a hand-written or provisioned string query
    ['', ['llama-3-8b', 'mistral-7b']], // a new variable
  ])('metricFindQuery(%j) lists %j', async (query, expected) => {
    const { ds } = makeDataSource(resources);
    const found = await ds.metricFindQuery(query);
    expect(found).toEqual(expected.map((v) => ({ text: v, value: v })));
  });

  it('resolves narrowing variables from the scoped variables of the request', async () => {
    const { ds } = makeDataSource(resources);
    const found = await ds.metricFindQuery(
      { refId: 'V', resource: 'instances', models: ['$model'] },
      { scopedVars: { model: { text: 'phi-3', value: 'phi-3' } } }
    );
    expect(found).toEqual([{ text: 'phi-3-host', value: 'phi-3-host' }]);
  });

  it('answers the variable request with MetricFindValues', async () => {
    const { ds } = makeDataSource(resources);
    const support = ds.variables as VllmVariableSupport;
    const request = {
      targets: [{ refId: 'V', resource: 'instances', models: ['$model'] }],
      scopedVars: {},
    } as unknown as DataQueryRequest<VllmVariableQuery>;
    const response = await lastValueFrom(support.query(request));
    expect(response.data).toEqual([{ text: 'llama-3-8b-host', value: 'llama-3-8b-host' }]);
  });

  it('starts a new variable with the models list', () => {
    const { ds } = makeDataSource(resources);
    expect(ds.variables && 'getDefaultQuery' in ds.variables && ds.variables.getDefaultQuery?.()).toEqual({
      refId: 'VllmVariableQuery',
      resource: 'models',
    });
  });
});
