import {
  QueryErrors,
  filterError,
  formatQuantiles,
  intervalError,
  isQueryValid,
  kError,
  parseK,
  parseQuantiles,
  quantileError,
  validateQuery,
} from './queryValidation';
import { QUERY_TYPES } from './queryOptions';
import { VllmQuery } from './types';

describe('quantiles (pkg/models/query.go parseWaitTime)', () => {
  it.each<[string, Array<number | string> | undefined]>([
    ['0.5, 0.9, 0.99', [0.5, 0.9, 0.99]],
    ['0.5 0.9,0.99', [0.5, 0.9, 0.99]],
    [' .25 , 1e-1 ', [0.25, 0.1]],
    ['0.5, $q, ${q2}', [0.5, '$q', '${q2}']],
    ['', undefined],
    [' , ', undefined],
    ['0.5, p99', [0.5, 'p99']],
  ])('parses %p', (text, expected) => {
    expect(parseQuantiles(text)).toEqual(expected);
  });

  it('formats a list back to text', () => {
    expect(formatQuantiles([0.5, '$q', 0.999])).toBe('0.5, $q, 0.999');
    expect(formatQuantiles(undefined)).toBe('');
  });

  it.each([[[0.5, 0.9, 0.99]], [[0.001, 0.999]], [['$q']], [undefined]])('accepts %j', (q) => {
    expect(quantileError(q)).toBeUndefined();
  });

  it.each([[[0]], [[1]], [[-0.5]], [[1.01]], [['abc']], [[NaN]]])('rejects %j', (q) => {
    expect(quantileError(q)).toBeDefined();
  });
});

describe('k (pkg/models/query.go parseK)', () => {
  it('parses numbers and keeps variables as text', () => {
    expect(parseK('7')).toBe(7);
    expect(parseK(' 2.5 ')).toBe(2.5);
    expect(parseK('$k')).toBe('$k');
    expect(parseK('  ')).toBeUndefined();
  });

  it.each([1, 5, 100, '42', '$k', '${k}', undefined])('accepts %p', (k) => {
    expect(kError(k)).toBeUndefined();
  });

  it.each([0, 101, 2.5, -3, 'ten', '0', '1000'])('rejects %p', (k) => {
    expect(kError(k)).toMatch(/whole number from 1 to 100/);
  });
});

describe('filters (pkg/models/query.go validateFilters)', () => {
  it('rejects empty values and more than 500 values', () => {
    expect(filterError(undefined)).toBeUndefined();
    expect(filterError(['a', '$b'])).toBeUndefined();
    expect(filterError(['a', ''])).toMatch(/Empty values/);
    expect(filterError(['  '])).toMatch(/Empty values/);
    expect(filterError(Array.from({ length: 500 }, (_, i) => `m${i}`))).toBeUndefined();
    expect(filterError(Array.from({ length: 501 }, (_, i) => `m${i}`))).toMatch(/At most 500/);
  });
});

describe('min step (pkg/interval parseMinStep)', () => {
  it.each(['', '30s', '1m30s', '1h', '1d', '0', '0s', '30', '<10s>', '$__interval', '${__rate_interval}', '$step'])(
    'accepts %p',
    (v) => {
      expect(intervalError(v)).toBeUndefined();
    }
  );

  it.each(['soon', '-1s', '1 m', '1.5d'])('rejects %p', (v) => {
    expect(intervalError(v)).toBeDefined();
  });
});

describe('validateQuery', () => {
  it('accepts every default query', () => {
    for (const queryType of ['queue', 'waitTime', 'preemptions', 'topk', 'gpu'] as const) {
      expect(validateQuery({ refId: 'A', queryType })).toEqual({});
    }
    expect(validateQuery({ refId: 'A', queryType: 'promql', expr: 'up' })).toEqual({});
  });

  it('checks only the options of the query type', () => {
    const stale: VllmQuery = { refId: 'A', queryType: 'queue', quantiles: [2], k: 0, rankBy: 'nope' as never };
    expect(isQueryValid(stale)).toBe(true);
    expect(validateQuery({ ...stale, queryType: 'waitTime' })).toEqual({ quantiles: expect.any(String) });
    expect(validateQuery({ ...stale, queryType: 'topk' })).toEqual({
      k: expect.any(String),
      rankBy: expect.any(String),
    });
  });

  it('rejects a grouping top-k does not take', () => {
    expect(validateQuery({ refId: 'A', queryType: 'topk', grouping: 'model' }).grouping).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'queue', grouping: 'model' }).grouping).toBeUndefined();
  });

  it('accepts variables for choices and flags unknown values', () => {
    expect(validateQuery({ refId: 'A', queryType: 'waitTime', family: '$fam' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'waitTime', family: 'p99' as never }).family).toMatch(/Unknown/);
    expect(validateQuery({ refId: 'A', queryType: 'topk', aggregation: 'sum' as never }).aggregation).toMatch(
      /Unknown aggregation "sum"/
    );
  });

  it('checks every filter whatever the type, like the backend', () => {
    const q: VllmQuery = { refId: 'A', queryType: 'gpu', models: [''], engines: ['0'], instances: [''] };
    expect(Object.keys(validateQuery(q)).sort()).toEqual(['instances', 'models']);
  });

  it('requires a PromQL expression', () => {
    expect(validateQuery({ refId: 'A', queryType: 'promql' }).expr).toBe('Enter a PromQL expression');
    expect(validateQuery({ refId: 'A', queryType: 'promql', expr: '  ' }).expr).toBeDefined();
  });

  it('checks format and source per type (pkg/models/query.go parseTopK, parseGPU)', () => {
    expect(validateQuery({ refId: 'A', queryType: 'topk', format: 'both' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'gpu', format: 'both' as never }).format).toMatch(/Unknown/);
    expect(validateQuery({ refId: 'A', queryType: 'gpu', source: 'nvml' as never }).source).toMatch(/Unknown/);
    expect(validateQuery({ refId: 'A', queryType: 'gpu', source: 'dcgm' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'gpu', source: 'prometheus', format: 'series' })).toEqual({});
  });
});

describe('validateQuery reads the table (queryTypes.json), not a case per type', () => {
  const options = QUERY_TYPES.types.flatMap((t) => (t.options ?? []).map((o) => [t.type, o.field, o] as const));

  it.each(options.filter(([, , o]) => o.kind === 'choice'))('flags an unknown %s %s', (queryType, field) => {
    const errors = validateQuery({ refId: 'A', queryType, [field]: 'no-such-value' } as VllmQuery);
    expect(errors[field as keyof typeof errors]).toMatch(/^Unknown .* "no-such-value"; pick one from the list/);
  });

  it.each(options.filter(([, , o]) => o.kind === 'integer' || o.kind === 'number'))(
    'flags %s %s above its range and accepts its default',
    (queryType, field, o) => {
      const above = { refId: 'A', queryType, [field]: o.range!.max + 1 } as VllmQuery;
      expect(validateQuery(above)[field as keyof QueryErrors]).toMatch(/ must be /);
      if (o.default !== undefined) {
        expect(validateQuery({ refId: 'A', queryType, [field]: o.default } as VllmQuery)).toEqual({});
      }
    }
  );

  it('flags an unknown SLO objective, which the backend refuses (before, only the backend said so)', () => {
    expect(validateQuery({ refId: 'A', queryType: 'slo', objective: 'uptime' as never }).objective).toBe(
      'Unknown objective "uptime"; pick one from the list or a variable'
    );
  });
});
