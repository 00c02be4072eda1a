import { validateQuery } from './queryValidation';
import {
  defaultTarget,
  parseNumber,
  snapBound,
  snapHint,
  targetError,
  thresholdError,
  windowError,
} from './sloOptions';
import { VllmQuery } from './types';

const slo = (extra: Partial<VllmQuery> = {}): VllmQuery => ({ refId: 'A', queryType: 'slo', ...extra });

describe('slo options (pkg/models/slo.go parseSLO)', () => {
  it('accepts the default query: every option may be left to the backend', () => {
    expect(validateQuery(slo())).toEqual({});
  });

  it.each([
    [{ threshold: 0 }, 'threshold', /above 0/],
    [{ threshold: 1e6 }, 'threshold', /up to 100000/],
    [{ threshold: 'fast' }, 'threshold', /"fast" is not a number/],
    [{ target: 1 }, 'target', /write 99% as 0.99/],
    [{ target: 99 }, 'target', /between 0 and 1/],
    [{ window: 'a month' }, 'window', /not a Prometheus duration/],
    [{ window: '5m' }, 'window', /1h to 366d/],
    [{ window: '2y' }, 'window', /1h to 366d/],
    [{ family: 'prefill' as never }, 'family', /Unknown SLO latency "prefill"/],
    [{ signals: ['burn_2h'] as never }, 'signals', /Unknown signal "burn_2h"/],
  ])('rejects %j like the backend', (extra, field, message) => {
    const errors = validateQuery(slo(extra as Partial<VllmQuery>));
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field as keyof typeof errors]).toMatch(message);
  });

  it('accepts variables and numeric strings, leaving them to the backend once resolved', () => {
    expect(validateQuery(slo({ threshold: '$t', target: '${target}', window: '$window', family: '$fam' }))).toEqual({});
    expect(thresholdError('0.5')).toBeUndefined();
    expect(targetError(' 0.999 ')).toBeUndefined();
    expect(windowError('1h30m')).toBeUndefined();
    expect(windowError('366d')).toBeUndefined();
  });

  it('checks slo options only for slo queries', () => {
    expect(validateQuery({ refId: 'A', queryType: 'queue', threshold: -1, window: 'x' })).toEqual({});
  });

  it('parses number inputs', () => {
    expect(parseNumber('')).toBeUndefined();
    expect(parseNumber(' 2.5 ')).toBe(2.5);
    expect(parseNumber('$t')).toBe('$t');
  });
});

describe('availability objectives (pkg/models/slo.go parseSLO, objective availability)', () => {
  it('ignores family and threshold, as the backend does, and still checks the target and window', () => {
    expect(
      validateQuery(slo({ objective: 'availability', family: 'prefill' as VllmQuery['family'], threshold: 0 }))
    ).toEqual({});
    expect(validateQuery(slo({ objective: 'availability', target: 1 })).target).toMatch(/between 0 and 1/);
    expect(validateQuery(slo({ objective: 'availability', window: '5m' })).window).toMatch(/1h to 366d/);
  });

  it('has no snap hint and defaults its target to three nines', () => {
    expect(snapHint(slo({ objective: 'availability', threshold: 0.7 }))).toBeUndefined();
    expect(defaultTarget(slo({ objective: 'availability' }))).toBe(0.999);
    expect(defaultTarget(slo())).toBe(0.99);
  });
});

describe('workload (pkg/models/workload.go parseWorkload)', () => {
  const workload = (extra: Partial<VllmQuery> = {}): VllmQuery => ({ refId: 'A', queryType: 'workload', ...extra });
  it.each(['tokens', 'prompt', 'generation', '$view'])('accepts view %s', (view) => {
    expect(validateQuery(workload({ view: view as VllmQuery['view'] }))).toEqual({});
  });

  it('names the allowed choice when the view is unknown', () => {
    expect(validateQuery(workload({ view: 'Prompt' as VllmQuery['view'] })).view).toMatch(/Unknown view "Prompt"/);
  });
});

describe('snapping (pkg/vllm/slo.go SnapBound)', () => {
  it.each([
    ['ttft', 0.7, 0.75],
    ['ttft', 1, 1],
    ['itl', 0.0625, 0.05], // a tie goes to the stricter bound
    ['queue_time', 0.01, 0.3],
    ['e2e', 1e5, 7680],
  ] as const)('%s %f snaps to %f', (family, threshold, bound) => {
    expect(snapBound(family, threshold)).toBe(bound);
  });

  it('says which bound will be used, and nothing for a bound or a variable', () => {
    expect(snapHint(slo({ family: 'ttft', threshold: 0.7 }))).toBe(
      '0.7 s is not a bucket bound of this histogram: 0.75 s will be used'
    );
    expect(snapHint(slo())).toBeUndefined();
    expect(snapHint(slo({ threshold: '$t' }))).toBeUndefined();
    expect(snapHint(slo({ family: '$fam' as never, threshold: 0.7 }))).toBeUndefined();
  });
});

describe('host (pkg/models/querytable.go: host takes the instance grouping only)', () => {
  it('accepts the default query and only the instance grouping', () => {
    expect(validateQuery({ refId: 'A', queryType: 'host' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'host', grouping: 'instance' })).toEqual({});
    expect(validateQuery({ refId: 'A', queryType: 'host', grouping: 'model' }).grouping).toMatch(/not available/);
  });
});
