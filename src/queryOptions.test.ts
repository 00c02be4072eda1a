import {
  AGGREGATION_OPTIONS,
  DEFAULT_K,
  DEFAULT_QUANTILES,
  FAMILY_OPTIONS,
  GPU_FORMAT_OPTIONS,
  GPU_SOURCE_OPTIONS,
  GROUPING_OPTIONS,
  LORA_FORMAT_OPTIONS,
  MAX_FILTER_VALUES,
  MAX_K,
  QUERY_TYPES,
  QUERY_TYPE_OPTIONS,
  RANK_BY_OPTIONS,
  SATURATION_FORMAT_OPTIONS,
  defaultGroupingFor,
  groupingOptionsFor,
} from './queryOptions';
import { QUERY_TYPE_KEYS } from './queryTypes.gen';
import { kError, validateQuery } from './queryValidation';
import {
  SLO_FAMILY_OPTIONS,
  SLO_OBJECTIVE_OPTIONS,
  SLO_SIGNAL_OPTIONS,
  targetError,
  thresholdError,
} from './sloOptions';
import { WORKLOAD_VIEW_OPTIONS } from './workloadOptions';

describe('the table of query types (queryTypes.json, generated from pkg/models)', () => {
  it('gives the limits and defaults the backend applies', () => {
    expect(DEFAULT_K).toBe(5);
    expect(MAX_K).toBe(100);
    expect(DEFAULT_QUANTILES).toEqual([0.5, 0.9, 0.99]);
    expect(MAX_FILTER_VALUES).toBe(500);
  });

  it('has the same query types in both generated files (queryTypes.json and queryTypes.gen.ts)', () => {
    expect(QUERY_TYPE_KEYS).toEqual(QUERY_TYPES.types.map((t) => t.type));
  });

  it('lists every query type and grouping in the backend order, each with editor wording', () => {
    expect(QUERY_TYPE_OPTIONS.map((o) => o.value)).toEqual(QUERY_TYPES.types.map((t) => t.type));
    for (const o of [...QUERY_TYPE_OPTIONS, ...GROUPING_OPTIONS]) {
      // A value without wording is shown by its name: the backend knows a value the editor's types lack.
      expect(o.label).not.toBe(o.value);
    }
  });

  it.each([
    ['family', FAMILY_OPTIONS],
    ['rankBy', RANK_BY_OPTIONS],
    ['aggregation', AGGREGATION_OPTIONS],
    ['gpu source', GPU_SOURCE_OPTIONS],
    ['gpu format', GPU_FORMAT_OPTIONS],
    ['lora format', LORA_FORMAT_OPTIONS],
    ['saturation format', SATURATION_FORMAT_OPTIONS],
    ['workload view', WORKLOAD_VIEW_OPTIONS],
    ['slo objective', SLO_OBJECTIVE_OPTIONS],
    ['slo family', SLO_FAMILY_OPTIONS],
    ['slo signal', SLO_SIGNAL_OPTIONS],
  ])('has editor wording for every %s the backend accepts', (_, options) => {
    expect(options.length).toBeGreaterThan(0);
    for (const o of options as Array<{ value: string; label?: string }>) {
      expect(o.label).not.toBe(o.value);
    }
  });

  it('gives each type its groupings and default grouping', () => {
    expect(groupingOptionsFor('topk').map((o) => o.value)).toEqual(['instance', 'instance_engine']);
    expect(groupingOptionsFor('fleet').map((o) => o.value)).toEqual(['instance_engine']);
    expect(groupingOptionsFor('host').map((o) => o.value)).toEqual(['instance']);
    expect(groupingOptionsFor('lora').map((o) => o.value)).toEqual(['instance']);
    expect(groupingOptionsFor('saturation').map((o) => o.value)).toEqual(['instance', 'instance_engine', 'role']);
    expect(groupingOptionsFor('queue')).toEqual(GROUPING_OPTIONS);
    expect(defaultGroupingFor('fleet')).toBe('instance_engine');
    expect(defaultGroupingFor('slo')).toBe('model');
    expect(defaultGroupingFor('kvTransfer')).toBe('role');
    expect(defaultGroupingFor('queue')).toBe('instance');
  });

  it('accepts an alias the backend accepts: "both" is the fleet table', () => {
    expect(validateQuery({ refId: 'A', queryType: 'fleet', format: 'both' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'fleet', format: 'series' }).format).toBeDefined();
  });
});

// The same strings as pkg/models/number_test.go TestNumbersFromStringsAreStrict: numbers written as text are read
// whole, as the backend reads them ("5x" is no 5 on either side).
describe('numbers written as text', () => {
  it.each(['5', ' 5 ', '\t7\n', '1e2', '+3', '5.', '5.0'])('k %j is a number', (text) => {
    expect(kError(text)).toBeUndefined();
  });
  it.each(['.99', ' 0.999 ', '9.9e-1'])('target %j is a number', (text) => {
    expect(targetError(text)).toBeUndefined();
  });
  it.each(['5x', 'x5', '0x10', '0x1p4', '1_0', 'NaN', 'Inf', '+Inf', 'infinity', '1e400', '5 5', '', ' ', '.', 'e5'])(
    '%j is refused as k, threshold and target',
    (text) => {
      expect(kError(text)).toBeDefined();
      expect(thresholdError(text)).toBeDefined();
      expect(targetError(text)).toBeDefined();
    }
  );
});
