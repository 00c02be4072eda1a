/*
 * The slo query's choices, defaults and checks. The values, defaults, limits and vLLM's bucket bounds come from the
 * backend's table of query types (queryTypes.json, generated from pkg/models/querytable.go); the wording is the
 * editor's. Kept apart from the other query types' options so each type's rules stay in one place.
 */
import { ComboboxOption } from '@grafana/ui';

import { NUMBER, choiceOptions, hasVariable, inRange, optionSpec, typeSpec } from './queryOptions';
import { VllmQuery, VllmSloFamily, VllmSloObjective, VllmSloSignal } from './types';

const SLO = typeSpec('slo')!.slo!;
const THRESHOLD_RANGE = optionSpec('slo', 'threshold').range!;
const TARGET_RANGE = optionSpec('slo', 'target').range!;
const WINDOW_RANGE = optionSpec('slo', 'window').durations!;

/** The default target of an objective kind: errors are rarer than slow requests, so availability's is higher. */
function objectiveTarget(name: VllmSloObjective): number {
  return SLO.objectives.find((o) => o.name === name)!.defaultTarget;
}

export const DEFAULT_SLO_FAMILY = optionSpec('slo', 'family').default as VllmSloFamily;
/** 1 s is a bucket bound of every SLO family, so a new query shows data at once and needs no snap notice. */
export const DEFAULT_SLO_THRESHOLD = optionSpec('slo', 'threshold').default as number;
export const DEFAULT_SLO_TARGET = objectiveTarget('latency');
/** An availability objective's default target (three nines). */
export const DEFAULT_AVAILABILITY_TARGET = objectiveTarget('availability');
export const DEFAULT_SLO_OBJECTIVE = optionSpec('slo', 'objective').default as VllmSloObjective;

export const SLO_OBJECTIVE_OPTIONS = choiceOptions<VllmSloObjective>('slo', 'objective', {
  latency: { label: 'Latency threshold', description: 'Requests finishing under a latency threshold' },
  availability: { label: 'Availability', description: 'Finished requests not ending in error' },
});

/** Whether the query is an availability objective (family and threshold do not apply). */
export function isAvailability(q: VllmQuery): boolean {
  return q.objective === 'availability';
}

/** The target the backend uses when none is given: it depends on the objective. */
export function defaultTarget(q: VllmQuery): number {
  return isAvailability(q) ? DEFAULT_AVAILABILITY_TARGET : DEFAULT_SLO_TARGET;
}
export const DEFAULT_SLO_WINDOW = optionSpec('slo', 'window').default as string;
/** The backend's MaxSLOThreshold, above every bucket vLLM has (7680 s). */
export const MAX_SLO_THRESHOLD = THRESHOLD_RANGE.max;

export const SLO_FAMILY_OPTIONS: Array<ComboboxOption<string>> = choiceOptions<VllmSloFamily>('slo', 'family', {
  ttft: { label: 'Time to first token' },
  itl: { label: 'Inter-token latency' },
  e2e: { label: 'End-to-end latency' },
  queue_time: { label: 'Queue time' },
});

export const SLO_SIGNAL_OPTIONS: Array<ComboboxOption<VllmSloSignal>> = choiceOptions<VllmSloSignal>('slo', 'signals', {
  attainment: { label: 'Attainment', description: 'Share of requests within the threshold over the window' },
  error_budget_left: { label: 'Error budget left', description: '1 − errors ÷ allowed errors' },
  burn_1h_5m: { label: 'Burn 1h/5m', description: 'Page above 14.4' },
  burn_6h_30m: { label: 'Burn 6h/30m', description: 'Page above 6' },
  burn_1d_2h: { label: 'Burn 1d/2h', description: 'Ticket above 3' },
  burn_3d_6h: { label: 'Burn 3d/6h', description: 'Ticket above 1' },
});

/**
 * vLLM's bucket bounds per family (pkg/vllm/slo.go LatencyBuckets, written into queryTypes.json by the generator). The
 * editor uses them to say, before the query runs, which bound a threshold will snap to.
 */
export const SLO_BOUNDS = SLO.bounds as Record<VllmSloFamily, number[]>;

/** The bound the backend snaps a threshold to: the nearest, the lower one on a tie (pkg/vllm/slo.go SnapBound). */
export function snapBound(family: VllmSloFamily, threshold: number): number {
  const bounds = SLO_BOUNDS[family];
  let best = bounds[0];
  for (const b of bounds.slice(1)) {
    if (Math.abs(b - threshold) < Math.abs(best - threshold)) {
      best = b;
    }
  }
  return best;
}

/** Parses a number input: a number when it is one, the text when it holds a variable (or a typo), undefined when empty. */
export function parseNumber(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') {
    return undefined;
  }
  return NUMBER.test(t) ? Number(t) : t;
}

/** A numeric option as a number, or undefined when absent or a variable (checked once resolved, by the backend). */
function numeric(label: string, v: number | string | undefined): number | string | undefined {
  if (v === undefined || typeof v === 'number') {
    return v;
  }
  const t = v.trim();
  if (hasVariable(t)) {
    return undefined;
  }
  return NUMBER.test(t) ? Number(t) : `${label} "${v}" is not a number`;
}

export function thresholdError(v: number | string | undefined): string | undefined {
  const n = numeric('Threshold', v);
  if (typeof n === 'string') {
    return n;
  }
  if (n !== undefined && !inRange(THRESHOLD_RANGE, n)) {
    return `Threshold must be seconds above ${THRESHOLD_RANGE.min}, up to ${THRESHOLD_RANGE.max}`;
  }
  return undefined;
}

export function targetError(v: number | string | undefined): string | undefined {
  const n = numeric('Target', v);
  if (typeof n === 'string') {
    return n;
  }
  if (n !== undefined && !inRange(TARGET_RANGE, n)) {
    return `Target must be between ${TARGET_RANGE.min} and ${TARGET_RANGE.max} (exclusive); write 99% as 0.99`;
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

export function windowError(v: string | undefined): string | undefined {
  const t = (v ?? '').trim();
  if (t === '' || hasVariable(t)) {
    return undefined;
  }
  if (!DURATION.test(t)) {
    return `Window "${v}" is not a Prometheus duration such as 28d or 30d`;
  }
  const ms = durationMs(t);
  if (ms < durationMs(WINDOW_RANGE.min) || ms > durationMs(WINDOW_RANGE.max)) {
    return `Window must be from ${WINDOW_RANGE.min} to ${WINDOW_RANGE.max}`;
  }
  return undefined;
}

/** The slo query's checks; the keys are QueryErrors keys. */
export function sloErrors(
  q: VllmQuery
): Partial<Record<'family' | 'threshold' | 'target' | 'window' | 'signals', string>> {
  const out: Partial<Record<'family' | 'threshold' | 'target' | 'window' | 'signals', string>> = {};
  const family = q.family;
  const latency = !isAvailability(q);
  if (latency && family && !hasVariable(family) && !SLO_FAMILY_OPTIONS.some((o) => o.value === family)) {
    out.family = `Unknown SLO latency "${family}"; pick one from the list or a variable`;
  }
  const bad = (q.signals ?? []).find((s) => !SLO_SIGNAL_OPTIONS.some((o) => o.value === s));
  const checks = {
    // An availability objective ignores a threshold left from a latency one, as the backend does.
    threshold: latency ? thresholdError(q.threshold) : undefined,
    target: targetError(q.target),
    window: windowError(q.window),
    signals: bad === undefined ? undefined : `Unknown signal "${bad}"`,
  };
  for (const [k, v] of Object.entries(checks)) {
    if (v) {
      out[k as keyof typeof checks] = v;
    }
  }
  return out;
}

/** What the editor says a threshold becomes, or undefined when it is a bound already (or not a number yet). */
export function snapHint(q: VllmQuery): string | undefined {
  if (isAvailability(q)) {
    return undefined;
  }
  const family = (q.family ?? DEFAULT_SLO_FAMILY) as VllmSloFamily;
  const t = typeof q.threshold === 'string' ? parseNumber(q.threshold) : (q.threshold ?? DEFAULT_SLO_THRESHOLD);
  if (typeof t !== 'number' || !SLO_BOUNDS[family] || thresholdError(t)) {
    return undefined;
  }
  const b = snapBound(family, t);
  return b === t ? undefined : `${t} s is not a bucket bound of this histogram: ${b} s will be used`;
}
