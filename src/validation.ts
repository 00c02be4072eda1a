/*
 * Client-side checks for the config editor. They mirror the backend's validation (pkg/models/settings.go) so a
 * mistake shows up next to the field while typing instead of only as a failed "Save & test". The backend stays
 * the authority: these functions only decide whether to show a hint, they never block saving.
 */

/** Go duration ("1m30s", "500ms", "1.5h") or Grafana's day/week/month/year units ("1d", "2w"), like gtime.ParseDuration. */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const GRAFANA_LONG_DURATION = /^\d+[dwMy]$/;
const ALL_ZERO = /^((0+(\.0*)?)(ns|us|µs|ms|s|m|h|d|w|M|y))+$/;

/** True when empty (the backend default applies) or a positive duration such as 15s or 1m. */
export function isValidDuration(value: string | undefined): boolean {
  const v = (value ?? '').trim();
  if (v === '') {
    return true;
  }
  return (GO_DURATION.test(v) || GRAFANA_LONG_DURATION.test(v)) && !ALL_ZERO.test(v);
}

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Milliseconds of a Go duration such as "1m30s" or "500ms"; undefined when it is not one. */
export function goDurationMs(value: string): number | undefined {
  const v = value.trim();
  if (!GO_DURATION.test(v)) {
    return undefined;
  }
  let total = 0;
  for (const [, num, , , unit] of v.matchAll(/(\d+(\.\d+)?)((ns|us|µs|ms|s|m|h))/g)) {
    total += Number(num) * UNIT_MS[unit];
  }
  return total;
}

/** True when empty (default 2s) or a duration the backend accepts for agentTimeout: above 0, at most 1m. */
export function isValidAgentTimeout(value: string | undefined): boolean {
  if (!value || value.trim() === '') {
    return true;
  }
  const ms = goDurationMs(value);
  return ms !== undefined && ms > 0 && ms <= 60_000;
}

/** True when empty or a Prometheus label name. */
export function isValidLabelName(value: string | undefined): boolean {
  return !value || /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(value);
}

/** True when empty or a valid start of a metric name (letters, digits, '_' and ':'), e.g. "vllm:". */
export function isValidMetricPrefix(value: string | undefined): boolean {
  return !value || /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(value);
}

/**
 * True for an http(s) URL with a host and without credentials: the form a node agent's base URL must have
 * (credentials in a URL would end up in logs; the agent token is the credential).
 */
export function isValidAgentUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && !u.username && !u.password;
  } catch {
    return false;
  }
}
