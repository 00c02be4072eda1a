import { CoreApp } from '@grafana/data';
import { setTemplateSrv } from '@grafana/runtime';

import { DataSource } from './datasource';
import { DEFAULT_QUERY, VllmQuery } from './types';
import { FakeTemplateSrv, makeInstanceSettings } from './testing/fixtures';

const baseQuery: VllmQuery = { refId: 'A', queryType: 'queue', grouping: 'model' };

describe('DataSource', () => {
  let ds: DataSource;

  beforeEach(() => {
    setTemplateSrv(
      new FakeTemplateSrv({
        model: 'llama-3-8b', // single-value variable
        models: ['llama-3-8b', 'mistral-7b'], // multi-value variable
        node: ['1', '2'],
        none: [], // multi-value variable with nothing selected
        host: 'gpu-a',
      })
    );
    ds = new DataSource(makeInstanceSettings());
  });

  it('declares annotation support so Grafana routes annotation queries to the backend', () => {
    expect(ds.annotations).toEqual({});
  });

  it('defaults new queries to queue depth per instance', () => {
    expect(ds.getDefaultQuery(CoreApp.Dashboard)).toEqual(DEFAULT_QUERY);
    expect(DEFAULT_QUERY).toEqual({ queryType: 'queue', grouping: 'instance' });
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

    it('keeps unknown variables and leaves other fields alone', () => {
      const query: VllmQuery = { ...baseQuery, models: ['$unknown'], k: 5, quantiles: [0.5, 0.99] };
      const out = ds.applyTemplateVariables(query, {});
      expect(out).toEqual({
        ...query,
        models: ['$unknown'],
        instances: undefined,
        engines: undefined,
        legend: undefined,
      });
      expect(query.models).toEqual(['$unknown']); // input not mutated
    });
  });

  it('filters out hidden queries only', () => {
    expect(ds.filterQuery({ ...baseQuery, hide: true })).toBe(false);
    expect(ds.filterQuery({ ...baseQuery, hide: false })).toBe(true);
    expect(ds.filterQuery(baseQuery)).toBe(true);
  });
});
