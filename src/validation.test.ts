import {
  goDurationMs,
  isValidAgentTimeout,
  isValidAgentUrl,
  isValidDuration,
  isValidLabelName,
  isValidMetricPrefix,
  matchersError,
} from './validation';

describe('validation hints (mirror pkg/models/settings.go)', () => {
  it.each(['', '15s', '1m', '1m30s', '500ms', '1.5h', '2d', '1w'])('accepts duration %p', (v) => {
    expect(isValidDuration(v)).toBe(true);
  });

  it.each(['15', 'soon', '0s', '0m0s', '-1s', '1 m', 's'])('rejects duration %p', (v) => {
    expect(isValidDuration(v)).toBe(false);
  });

  it.each([
    '',
    '{}',
    'cluster="eu-1"',
    '{cluster="eu-1", namespace=~"inference|batch"}',
    'cluster="", team!="a\\"b"',
    "pod!~'canary-.*',",
    '"k8s.cluster"="eu-1"',
    'namespace=~"$namespace"',
  ])('accepts label matchers %p (pkg/models/matchers.go)', (v) => {
    expect(matchersError(v)).toBeUndefined();
  });

  it.each([
    'cluster=eu-1',
    'cluster',
    'sum(up)',
    'cluster="a"} or vector(1) or {b="c"',
    'cluster="a" namespace="b"',
    'cluster=="a"',
  ])('rejects what is not label matchers %p', (v) => {
    expect(matchersError(v)).toMatch(/label matchers/);
  });

  it('rejects a metric-name matcher', () => {
    expect(matchersError('__name__="up"')).toMatch(/metric name/);
  });

  it('checks label names and metric prefixes like Prometheus', () => {
    expect(isValidLabelName('pod')).toBe(true);
    expect(isValidLabelName('_instance2')).toBe(true);
    expect(isValidLabelName('2pod')).toBe(false);
    expect(isValidLabelName('k8s-pod')).toBe(false);
    expect(isValidMetricPrefix('vllm:')).toBe(true);
    expect(isValidMetricPrefix('ray_vllm:')).toBe(true);
    expect(isValidMetricPrefix('vllm-')).toBe(false);
  });

  it('checks agent URLs like pkg/models/agents.go', () => {
    expect(isValidAgentUrl('http://gpu-node-1:9400')).toBe(true);
    expect(isValidAgentUrl('https://10.0.0.7/')).toBe(true);
    expect(isValidAgentUrl('gpu-node-1:9400')).toBe(false);
    expect(isValidAgentUrl('ftp://gpu-node-1')).toBe(false);
    expect(isValidAgentUrl('http://user:secret@gpu-node-1')).toBe(false);
    expect(isValidAgentUrl('')).toBe(false);
  });

  it('reads Go durations in milliseconds', () => {
    expect(goDurationMs('1m30s')).toBe(90_000);
    expect(goDurationMs('500ms')).toBe(500);
    expect(goDurationMs('1.5s')).toBe(1500);
    expect(goDurationMs('2d')).toBeUndefined();
  });

  it.each(['', '2s', '500ms', '1m', '59.9s'])('accepts agent timeout %p', (v) => {
    expect(isValidAgentTimeout(v)).toBe(true);
  });

  it.each(['0s', '61s', '2m', '1d', 'soon'])('rejects agent timeout %p', (v) => {
    expect(isValidAgentTimeout(v)).toBe(false);
  });
});
