/*
 * Client-side checks of a query, mirroring pkg/models/query.go (ParseQuery). They are generic over the backend's table
 * of query types (queryTypes.json): each option of the query's type is checked by its kind, allowed values and
 * aliases, range, required flag and, for the slo type, the objective kind that reads it; only the wording of the
 * messages lives here (OPTION_WORDING). The editor shows them next to the field and does not run a query that fails
 * one: the backend would reject it anyway, and a rejected query replaces the panel's data with an error while the
 * user is still typing. Values holding a dashboard variable are accepted here; they are checked by the backend once
 * resolved.
 */
import {
  BUILTIN_INTERVALS,
  MAX_FILTER_VALUES,
  NUMBER,
  OptionSpec,
  RangeSpec,
  TypeSpec,
  acceptedValues,
  groupingOptionsFor,
  hasVariable,
  inRange,
  optionSpec,
  typeSpec,
} from './queryOptions';
import { VllmOptionField } from './queryTypes.gen';
import { VllmQuery, VllmQueryType } from './types';
import { matchersError } from './validation';

/** Error messages by query field; a field that is absent is valid. */
export type QueryErrors = Partial<
  Record<'grouping' | 'models' | 'instances' | 'engines' | 'interval' | 'matchers' | VllmOptionField, string>
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

/** The quantiles of a wait-time (or KV-transfer) query: numbers in (0, 1), or variables. */
export function quantileError(quantiles: Array<number | string> | undefined): string | undefined {
  return optionError('waitTime', 'quantiles', quantiles);
}

/** Top-k's k: a whole number from 1 to 100 (a number or a numeric string), or a variable. */
export function kError(k: number | string | undefined): string | undefined {
  return optionError('topk', 'k', k);
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
 * Checks the options the query's type uses, as the table lists them (the backend ignores the others, so a stale value
 * of another type never blocks a query). Filters are the exception: the backend validates them for every type.
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
  const spec = typeSpec(type);
  if (spec) {
    const ignored = ignoredFields(spec, query);
    const values = query as unknown as Record<string, unknown>;
    for (const o of spec.options ?? []) {
      if (!ignored.has(o.field)) {
        set(o.field as keyof QueryErrors, checkOption(type, o, values[o.field]));
      }
    }
  }
  return errors;
}

export function isQueryValid(query: VllmQuery): boolean {
  return Object.keys(validateQuery(query)).length === 0;
}

/** How a message names an option, and what it adds. */
interface OptionWording {
  /** The option as its messages name it: "latency family", "k", "Threshold". */
  noun: string;
  /** What a number measures, said before its range: "seconds". */
  unit?: string;
  /** Said after a value out of range: "; write 99% as 0.99". */
  hint?: string;
  /** Valid values, after "such as"; a list's default when absent. */
  example?: string;
  /** The message for a required text left empty. */
  required?: string;
}

/**
 * The wording of the options' messages, by "type.field" and then by field (an option without one is named by its
 * field). Wording only: what is valid comes from the table.
 */
const OPTION_WORDING: Record<string, OptionWording> = {
  quantiles: { noun: 'Quantile', hint: '; use e.g. 0.99 for p99' },
  'waitTime.family': { noun: 'latency family' },
  'slo.family': { noun: 'SLO latency' },
  k: { noun: 'k' },
  rankBy: { noun: 'signal' },
  aggregation: { noun: 'aggregation' },
  format: { noun: 'output format' },
  'gpu.format': { noun: 'format' },
  'fleet.format': { noun: 'format (the fleet is a table)' },
  source: { noun: 'source' },
  view: { noun: 'view' },
  objective: { noun: 'objective' },
  threshold: { noun: 'Threshold', unit: 'seconds' },
  target: { noun: 'Target', hint: '; write 99% as 0.99' },
  window: { noun: 'Window', example: '28d or 30d' },
  signals: { noun: 'signal' },
  expr: { noun: 'a PromQL expression', required: 'Enter a PromQL expression' },
};

function wordingOf(queryType: VllmQueryType, field: string): OptionWording {
  return OPTION_WORDING[`${queryType}.${field}`] ?? OPTION_WORDING[field] ?? { noun: field };
}

/**
 * The fields the query's objective kind does not read (slo: family and threshold for an availability objective), as
 * the backend ignores them. An unknown objective reads as the default, the first kind, which its own check flags.
 */
function ignoredFields(spec: TypeSpec, query: VllmQuery): Set<string> {
  const objectives = spec.slo?.objectives ?? [];
  const current = objectives.find((o) => o.name === query.objective) ?? objectives[0];
  const own = new Set(current?.fields ?? []);
  return new Set(objectives.flatMap((o) => o.fields ?? []).filter((f) => !own.has(f)));
}

/** The error of one option's value, or undefined when it is valid, absent (the backend default) or a variable. */
export function optionError(queryType: VllmQueryType, field: string, value: unknown): string | undefined {
  return checkOption(queryType, optionSpec(queryType, field), value);
}

function checkOption(queryType: VllmQueryType, o: OptionSpec, value: unknown): string | undefined {
  const w = wordingOf(queryType, o.field);
  switch (o.kind) {
    case 'choice':
      return choiceError(o, w, value);
    case 'choices':
      return choicesError(o, w, value);
    case 'integer':
    case 'number':
      return numberError(o, w, value);
    case 'numbers':
      return numbersError(o, w, value);
    case 'duration':
      return durationError(o, w, value);
    case 'text':
      return o.required && (typeof value !== 'string' || value.trim() === '')
        ? (w.required ?? `Enter ${w.noun}`)
        : undefined;
    case 'boolean':
      // Not checked, as before: the editor's switches write only true or false.
      return undefined;
  }
}

/** One of the values or aliases the backend accepts; empty means the backend default. */
function choiceError(o: OptionSpec, w: OptionWording, value: unknown): string | undefined {
  if (typeof value !== 'string' || !value || hasVariable(value)) {
    return undefined;
  }
  if (acceptedValues(o).some((a) => a.value === value)) {
    return undefined;
  }
  return `Unknown ${w.noun} "${value}"; pick one from the list or a variable`;
}

/** A list, each entry one of the values; the editor offers no variables here and the data source resolves none. */
function choicesError(o: OptionSpec, w: OptionWording, value: unknown): string | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  const accepted = acceptedValues(o).map((a) => a.value);
  const bad: unknown = value.find((v) => !accepted.includes(v));
  return bad === undefined ? undefined : `Unknown ${w.noun} "${bad}"`;
}

/** A range in words: "from 1 to 100", "above 0, up to 100000", "between 0 and 1 (exclusive)". */
function rangeWords(r: RangeSpec): string {
  if (r.minOpen && r.maxOpen) {
    return `between ${r.min} and ${r.max} (exclusive)`;
  }
  if (r.minOpen) {
    return `above ${r.min}, up to ${r.max}`;
  }
  return r.maxOpen ? `from ${r.min}, below ${r.max}` : `from ${r.min} to ${r.max}`;
}

/** A range in interval notation, as pkg/models Range.String writes it: "(0, 1)", "[1, 100]". */
function rangeText(r: RangeSpec): string {
  return `${r.minOpen ? '(' : '['}${r.min}, ${r.max}${r.maxOpen ? ')' : ']'}`;
}

/**
 * An integer or number inside the range: a number, or text written as the backend reads numbers (NUMBER), or a
 * variable.
 */
function numberError(o: OptionSpec, w: OptionWording, value: unknown): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const integer = o.kind === 'integer';
  const what = [integer ? 'a whole number' : w.unit, o.range ? rangeWords(o.range) : undefined]
    .filter(Boolean)
    .join(' ');
  let n = value;
  if (typeof value === 'string') {
    const t = value.trim();
    if (hasVariable(t)) {
      return undefined;
    }
    if (!NUMBER.test(t)) {
      return integer ? `${w.noun} "${value}" is not a number; use ${what}` : `${w.noun} "${value}" is not a number`;
    }
    n = Number(t);
  }
  if (typeof n !== 'number' || (integer && !Number.isInteger(n)) || (o.range && !inRange(o.range, n))) {
    return `${w.noun} must be ${what}${w.hint ?? ''}`;
  }
  return undefined;
}

/** A list of numbers, each inside the range; an entry may be text only while it holds a variable. */
function numbersError(o: OptionSpec, w: OptionWording, value: unknown): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const example = w.example ?? (Array.isArray(o.default) ? o.default.join(', ') : '');
  for (const v of Array.isArray(value) ? value : [value]) {
    if (typeof v === 'string') {
      if (!hasVariable(v)) {
        return `"${v}" is not a number; use ${o.field} such as ${example}`;
      }
    } else if (typeof v !== 'number' || (o.range && !inRange(o.range, v))) {
      // Quantiles: strictly between 0 and 1, as the backend (p0 and p100 are not quantiles a histogram can give).
      return `${w.noun} ${v} is outside ${o.range ? rangeText(o.range) : 'the range'}${w.hint ?? ''}`;
    }
  }
  return undefined;
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8, y: 3.1536e10 };

/** Milliseconds of a Prometheus duration such as "28d" or "1h30m". */
function durationMs(v: string): number {
  let total = 0;
  for (const [, n, unit] of v.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) {
    total += Number(n) * UNIT_MS[unit];
  }
  return total;
}

/** A Prometheus duration inside the table's bounds (both included), or a variable. */
function durationError(o: OptionSpec, w: OptionWording, value: unknown): string | undefined {
  if (value === undefined) {
    return undefined;
  }
  const t = String(value).trim();
  if (t === '' || hasVariable(t)) {
    return undefined;
  }
  if (!DURATION.test(t)) {
    return `${w.noun} "${value}" is not a Prometheus duration such as ${w.example ?? o.default}`;
  }
  const r = o.durations;
  if (r && (durationMs(t) < durationMs(r.min) || durationMs(t) > durationMs(r.max))) {
    return `${w.noun} must be from ${r.min} to ${r.max}`;
  }
  return undefined;
}
