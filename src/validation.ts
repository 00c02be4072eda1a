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

/** One PromQL label matcher: a name (plain or quoted), an operator and a quoted value, then a comma or the end. */
const MATCHER =
  /^\s*([a-zA-Z_][a-zA-Z0-9_]*|"(?:[^"\\]|\\.)*")\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,|$)/;

/**
 * A hint for a selector or per-query matcher list (`cluster="eu-1", namespace=~"a|b"`; braces allowed), mirroring
 * the backend's parser (pkg/models/matchers.go) closely enough to catch typos while typing: undefined when empty
 * or well-formed. The backend parses it with Prometheus' own parser and has the last word.
 */
export function matchersError(value: string | undefined): string | undefined {
  let v = (value ?? '').trim();
  if (v.startsWith('{') && v.endsWith('}')) {
    v = v.slice(1, -1).trim();
  }
  while (v !== '') {
    const m = MATCHER.exec(v);
    if (!m) {
      return 'Use PromQL label matchers such as cluster="eu-1", namespace=~"a|b" (values in quotes)';
    }
    if (m[1] === '__name__' || m[1] === '"__name__"') {
      return 'The metric name cannot be matched here: the data source picks the vLLM metrics itself';
    }
    v = v.slice(m[0].length).trim();
  }
  return undefined;
}
