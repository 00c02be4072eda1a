package vllm

import (
	"context"
	"strings"
	"time"
)

// This file finds when the recording rules began: a range that starts
// before their first evaluation is answered from raw series up to it and
// from the rules after it (pkg/query/rulemix.go), and says so.

// RuleStartMaxSteps bounds the steps of one first-evaluation probe's
// subquery: a week's range at a 30s interval would be 20,160 steps per
// series, past Prometheus' sample limit at a few thousand engines. A
// longer range is probed coarsely, then again at the interval inside the
// coarse step that found the first sample.
const RuleStartMaxSteps = 240

// RuleStartName is the name of a rule plan's recorded names to probe for
// the rules' first evaluation: the first that is not a histogram bucket
// (one series per engine rather than one per bucket). A plan's names all
// come from one rule group (bucket, _sum and _count of one window; one
// gauge or rate), and a group evaluates its rules together at the same
// timestamps, so one name's first evaluation is every name's.
func RuleStartName(names []string) string {
	for _, n := range names {
		if !strings.Contains(n, "_bucket:") {
			return n
		}
	}
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// RuleStart is the instant expression whose value, at time t, is the
// time (seconds) of the earliest recorded sample of name inside the scope
// within rng before t, seen every res: timestamp() gives a sample's own
// time (not the step's), so with res at most the evaluation interval the
// first subquery step after the first evaluation returns that
// evaluation's time exactly; a coarser res returns a later sample (one
// inside the first res that saw the series). min over the series and
// steps; empty when no sample is seen.
func (b Builder) RuleStart(name string, rng, res time.Duration) string {
	sel := selector(name, strings.Join(b.scope(), ", "))
	return "min(min_over_time(timestamp(" + sel + ")[" + ShortDuration(rng) + ":" + ShortDuration(res) + "]))"
}

// RuleStartResolution is the probe resolution for a range of rng: the
// evaluation interval, or the smallest multiple of it that keeps the
// subquery within RuleStartMaxSteps.
func RuleStartResolution(rng, every time.Duration) time.Duration {
	if every <= 0 {
		return rng
	}
	n := (rng + every*RuleStartMaxSteps - 1) / (every * RuleStartMaxSteps)
	return every * max(n, 1)
}

// RuleFirstEvaluation is the time of the recorded series' first
// evaluation inside (from, to], the rules evaluated every `every`; ok is
// false when no sample of name is in it. A coarse first probe is refined
// inside the last coarse step before the sample it found (where the first
// evaluation must lie, since the rules run every interval once started),
// until the resolution is the interval. A refinement that sees nothing
// keeps the coarse answer: then the first evaluation fell after the
// refinement's last step, and is the sample found.
func (b Builder) RuleFirstEvaluation(ctx context.Context, query InstantQuery, name string, from, to time.Time, every time.Duration) (time.Time, bool, error) {
	rng, at := to.Sub(from), to
	var first time.Time
	for {
		res := RuleStartResolution(rng, every)
		v, ok, err := query(ctx, b.RuleStart(name, rng, res), at)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok {
			if t := secondsTime(v); first.IsZero() || t.Before(first) {
				first = t
			}
		}
		if first.IsZero() || !ok || res <= every {
			return first, !first.IsZero(), nil
		}
		rng, at = res, first
	}
}

// secondsTime is a timestamp() value (seconds, millisecond precision) as a time.
func secondsTime(v float64) time.Time {
	return time.UnixMilli(int64(v*1000 + 0.5)).UTC()
}
