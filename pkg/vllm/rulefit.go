package vllm

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file decides how well the recording rules answer a query: exactly
// (the default policy), closely (the opt-in nearest policy), or not at all.

// NearestWindowFactor bounds the nearest policy's window: the recorded
// window it reads is at most this many times longer or shorter than the
// query's rate window ($__rate_interval). 2.5 lets the 5m rules stand in
// for the 2m–2m30s windows of 2m steps and of a 30s scrape, and no further.
const NearestWindowFactor = 2.5

// RuleFit is how the recorded series answer a question.
type RuleFit struct {
	// Why they cannot answer it; "" when they can.
	Why string
	// Window is the recorded rate window to read, a PromQL duration: the
	// query's own when exact, the nearest recorded one ("1m") otherwise;
	// "" for a question without one (gauges).
	Window string
	// Exact: the answer is the raw one at the rules' latest evaluation at
	// or before each step. Otherwise it is close (RulesNearest): Window may
	// differ from the query's and each step reads the latest evaluation,
	// at most one interval old.
	Exact bool
}

// RuleFit says whether and how the recorded series answer q under its
// policy. The scope rules (names, profile, labels kept) hold for both
// policies: breaking them gives a different answer, not a close one.
func (b Builder) RuleFit(rs RuleSet, q RuleQuestion) RuleFit {
	if why := b.ruleScopeWhy(rs, q); why != "" {
		return RuleFit{Why: why}
	}
	why := exactWhy(rs, q)
	if why == "" {
		return RuleFit{Window: q.Window, Exact: true}
	}
	if q.Policy != models.RulesNearest {
		return RuleFit{Why: why}
	}
	return nearestFit(rs, q)
}

// ruleScopeWhy checks what both policies need: a measured interval, vLLM's
// own names, no profile exclusions and every used label kept.
func (b Builder) ruleScopeWhy(rs RuleSet, q RuleQuestion) string {
	switch {
	case rs.Interval <= 0:
		return "the evaluation interval is unknown"
	case !slices.Equal(b.prefixes(), []string{models.DefaultMetricPrefix}):
		return "the rules record vllm: names only"
	case len(b.Exclude) > 0:
		return "the profile excludes series the rules include"
	case b.joining():
		return "labels come from target_info or promoted resource attributes (an OTLP-fed store), which the rules' series do not carry"
	case b.Detected.TrimmedCounters:
		return "counters are stored without _total (an OTLP-fed store), which the rules do not read"
	}
	return b.ruleLabelsKept(rs, q)
}

// exactWhy checks what an exact answer needs besides the scope: a step
// that is a whole number of evaluation intervals and a recorded window.
func exactWhy(rs RuleSet, q RuleQuestion) string {
	switch {
	case q.Step%rs.Interval != 0:
		return fmt.Sprintf("the step %s is not a multiple of the evaluation interval %s", q.Step, rs.Interval)
	case q.Window != "" && ruleSuffix(q.Window) == "":
		return fmt.Sprintf("the rate window %s is not a recorded one (1m, 5m)", q.Window)
	}
	return ""
}

// nearestFit is the nearest policy's answer: any step of at least one
// interval (so no two steps read the same evaluation) and the recorded
// window nearest the query's, when one is within NearestWindowFactor.
func nearestFit(rs RuleSet, q RuleQuestion) RuleFit {
	if q.Step < rs.Interval {
		return RuleFit{Why: fmt.Sprintf("the step %s is shorter than the evaluation interval %s", q.Step, rs.Interval)}
	}
	if q.Window == "" {
		return RuleFit{}
	}
	d, err := model.ParseDuration(q.Window)
	if err != nil || d <= 0 {
		return RuleFit{Why: fmt.Sprintf("the rate window %q is not a duration", q.Window)}
	}
	w, ok := NearestWindow(time.Duration(d), q.Step, q.Scrape)
	if !ok {
		return RuleFit{Why: fmt.Sprintf("no recorded window (1m, 5m) is within %g× the rate window %s, at least the step %s and four scrapes",
			NearestWindowFactor, ShortDuration(time.Duration(d)), ShortDuration(q.Step))}
	}
	return RuleFit{Window: ShortDuration(w)}
}

// NearestWindow is the recorded window nearest (by ratio) the rate window
// want among those that cover every step (at least step long, so no
// sample falls between two windows) and span four scrapes (Grafana's
// floor for $__rate_interval: rate() needs two samples, and a window of
// fewer scrapes can miss one; the rule file says rate1m needs a scrape of
// 15s or less); ok is false when none is within NearestWindowFactor. A
// tie goes to the longer window. scrape 0 means unknown: not checked.
func NearestWindow(want, step, scrape time.Duration) (time.Duration, bool) {
	var best time.Duration
	bestDist := math.Inf(1)
	for _, w := range recordedWindows() {
		if w < step || w < 4*scrape {
			continue
		}
		dist := math.Abs(math.Log(float64(w) / float64(want)))
		if dist <= bestDist+1e-12 {
			best, bestDist = w, dist
		}
	}
	return best, best > 0 && bestDist <= math.Log(NearestWindowFactor)+1e-12
}

// recordedWindows are RuleWindows' durations, shortest first.
func recordedWindows() []time.Duration {
	out := make([]time.Duration, 0, len(RuleWindows))
	for _, w := range RuleWindows {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}
