/*
 * The slo query's choices, defaults and checks. The values, defaults, limits and vLLM's bucket bounds come from the
 * backend's table of query types (queryTypes.json, generated from pkg/models/querytable.go); the wording is the
 * editor's. The checks are queryValidation.ts's, generic over the table; the wrappers here name the slo fields.
 */
import { ComboboxOption } from '@grafana/ui';

import { NUMBER, choiceOptions, optionSpec, typeSpec } from './queryOptions';
import { optionError } from './queryValidation';
import { VllmQuery, VllmSloFamily, VllmSloObjective, VllmSloSignal } from './types';

const SLO = typeSpec('slo')!.slo!;
const THRESHOLD_RANGE = optionSpec('slo', 'threshold').range!;

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

/** The threshold's check (pkg/models/querytable.go: seconds in (0, 100000]); a variable is checked once resolved. */
export function thresholdError(v: number | string | undefined): string | undefined {
  return optionError('slo', 'threshold', v);
}

/** The target's check: a share strictly between 0 and 1. */
export function targetError(v: number | string | undefined): string | undefined {
  return optionError('slo', 'target', v);
}

/** The window's check: a Prometheus duration from 1h to 366d. */
export function windowError(v: string | undefined): string | undefined {
  return optionError('slo', 'window', v);
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
