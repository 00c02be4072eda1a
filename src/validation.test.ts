import { isValidDuration, isValidLabelName, isValidMetricPrefix } from './validation';

describe('validation hints (mirror pkg/models/settings.go)', () => {
  it.each(['', '15s', '1m', '1m30s', '500ms', '1.5h', '2d', '1w'])('accepts duration %p', (v) => {
    expect(isValidDuration(v)).toBe(true);
  });

  it.each(['15', 'soon', '0s', '0m0s', '-1s', '1 m', 's'])('rejects duration %p', (v) => {
    expect(isValidDuration(v)).toBe(false);
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
});
