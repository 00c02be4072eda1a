/*
 * Client-side checks of a query, mirroring pkg/models/query.go (ParseQuery) and reading the same table of query types
 * (queryTypes.json: allowed values, aliases, limits, the number syntax). The editor shows them next to the field
 * and does not run a query that fails one: the backend would reject it anyway, and a rejected query replaces the
 * panel's data with an error while the user is still typing. Values holding a dashboard variable are accepted here;
 * they are checked by the backend once resolved.
 */
import {
  BUILTIN_INTERVALS,
  K_RANGE,
  MAX_FILTER_VALUES,
  NUMBER,
  QUANTILE_RANGE,
  acceptedValues,
  groupingOptionsFor,
  hasVariable,
  inRange,
  optionSpec,
} from './queryOptions';
import { sloErrors } from './sloOptions';
import { VllmQuery, VllmQueryType } from './types';
import { matchersError } from './validation';

/** Error messages by query field; a field that is absent is valid. */
export type QueryErrors = Partial<
  Record<
    | 'grouping'
    | 'models'
    | 'instances'
    | 'engines'
    | 'quantiles'
    | 'family'
    | 'k'
    | 'rankBy'
    | 'aggregation'
    | 'format'
    | 'source'
    | 'interval'
    | 'matchers'
    | 'expr'
    | 'threshold'
    | 'target'
    | 'window'
    | 'signals'
    | 'view',
    string
  >
>;

/**
 * Parses the quantile text input ("0.5, 0.9, 0.99"; commas or spaces). Numbers become numbers, as the backend wants;
 * anything else stays a string (a variable such as "$q", or a typo the validation reports). Empty text means "use
 * the backend default" and gives undefined.
 */
export function parseQuantiles(text: string): Array<number | string> | undefined {
  const tokens = text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (tokens.length === 0) {
    return undefined;
  }
  return tokens.map((t) => (NUMBER.test(t) ? Number(t) : t));
}

export function formatQuantiles(quantiles: Array<number | string> | undefined): string {
  return (quantiles ?? []).join(', ');
}

/** Parses the k input: a number when it is one, the text when it holds a variable (or a typo), undefined when empty. */
export function parseK(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') {
    return undefined;
  }
  return NUMBER.test(t) ? Number(t) : t;
}

export function quantileError(quantiles: Array<number | string> | undefined): string | undefined {
  for (const q of quantiles ?? []) {
    if (typeof q === 'string') {
      if (!hasVariable(q)) {
        return `"${q}" is not a number; use quantiles such as 0.5, 0.9, 0.99`;
      }
    } else if (!inRange(QUANTILE_RANGE, q)) {
      // Same rule as the backend: strictly between 0 and 1 (p0 and p100 are not quantiles a histogram can give).
      return `Quantile ${q} is outside (${QUANTILE_RANGE.min}, ${QUANTILE_RANGE.max}); use e.g. 0.99 for p99`;
    }
  }
  return undefined;
}

export function kError(k: number | string | undefined): string | undefined {
  if (k === undefined) {
    return undefined;
  }
  if (typeof k === 'string') {
    const t = k.trim();
    if (hasVariable(t)) {
      return undefined;
    }
    if (!NUMBER.test(t)) {
      return `k "${k}" is not a number; use a whole number from ${K_RANGE.min} to ${K_RANGE.max}`;
    }
    k = Number(t);
  }
  if (!Number.isInteger(k) || !inRange(K_RANGE, k)) {
    return `k must be a whole number from ${K_RANGE.min} to ${K_RANGE.max}`;
  }
  return undefined;
}

export function filterError(values: string[] | undefined): string | undefined {
  if (!values) {
    return undefined;
  }
  if (values.some((v) => v.trim() === '')) {
    return 'Empty values are not allowed; remove the empty entry';
  }
  if (values.length > MAX_FILTER_VALUES) {
    return `At most ${MAX_FILTER_VALUES} values; use a coarser filter or a variable`;
  }
  return undefined;
}

/**
 * A choice option of the query's type that must be one of the values (or aliases) the backend accepts unless it is a
 * variable; empty means the backend default.
 */
function choiceError(label: string, q: VllmQuery, field: keyof VllmQuery & string): string | undefined {
  const value = q[field];
  if (typeof value !== 'string' || !value || hasVariable(value)) {
    return undefined;
  }
  if (acceptedValues(optionSpec(q.queryType as VllmQueryType, field)).some((o) => o.value === value)) {
    return undefined;
  }
  return `Unknown ${label} "${value}"; pick one from the list or a variable`;
}

/**
 * What gtime.ParseIntervalStringToTimeDuration (the backend's min-step parser) accepts: optional <…> brackets,
 * plain seconds ("30"), Go durations ("1m30s", "0s" meaning unset) and Grafana's d/w/M/y units.
 */
const MIN_STEP = /^(\d+|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+|\d+[dwMy])$/;

export function intervalError(interval: string | undefined): string | undefined {
  const v = (interval ?? '').trim();
  if (
    v === '' ||
    BUILTIN_INTERVALS.includes(v) ||
    hasVariable(v) ||
    MIN_STEP.test(v.replace(/^</, '').replace(/>$/, ''))
  ) {
    return undefined;
  }
  return 'Use a duration such as 30s, 2m or 1h, or $__rate_interval';
}

/**
 * Checks the options the query's type uses (the backend ignores the others, so a stale value of another type never
 * blocks a query). Filters are the exception: the backend validates them for every type.
 */
export function validateQuery(query: VllmQuery): QueryErrors {
  const errors: QueryErrors = {};
  const set = (key: keyof QueryErrors, message: string | undefined) => {
    if (message) {
      errors[key] = message;
    }
  };
  const type = query.queryType;
  if (query.grouping && !groupingOptionsFor(type).some((o) => o.value === query.grouping)) {
    set('grouping', `Grouping "${query.grouping}" is not available for this query type`);
  }
  set('models', filterError(query.models));
  set('instances', filterError(query.instances));
  set('engines', filterError(query.engines));
  set('interval', intervalError(query.interval));
  set('matchers', matchersError(query.matchers));
  if (type === 'kvTransfer') {
    set('quantiles', quantileError(query.quantiles));
  }
  if (type === 'waitTime') {
    set('quantiles', quantileError(query.quantiles));
    set('family', choiceError('latency family', query, 'family'));
  }
  if (type === 'topk') {
    set('k', kError(query.k));
    set('rankBy', choiceError('signal', query, 'rankBy'));
    set('aggregation', choiceError('aggregation', query, 'aggregation'));
    // The editor writes only table, via the Output switch; the backend accepts series and both too.
    set('format', choiceError('output format', query, 'format'));
  }
  if (type === 'gpu') {
    set('source', choiceError('source', query, 'source'));
    set('format', choiceError('format', query, 'format'));
  }
  if (type === 'workload') {
    set('view', choiceError('view', query, 'view'));
  }
  if (type === 'saturation') {
    set('format', choiceError('output format', query, 'format'));
  }
  if (type === 'lora') {
    set('format', choiceError('output format', query, 'format'));
  }
  if (type === 'fleet') {
    set('format', choiceError('format (the fleet is a table)', query, 'format'));
  }
  if (type === 'slo') {
    Object.assign(errors, sloErrors(query));
  }
  if (type === 'promql' && optionSpec('promql', 'expr').required && !query.expr?.trim()) {
    set('expr', 'Enter a PromQL expression');
  }
  return errors;
}

export function isQueryValid(query: VllmQuery): boolean {
  return Object.keys(validateQuery(query)).length === 0;
}
