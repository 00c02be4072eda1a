package vllm

import (
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// Names of the stall and sleep expressions (SignalExpr.Name).
const (
	// FleetStalled has a sample for each stalled engine (see Stalled).
	FleetStalled = "stalled"
	// FleetSleeping is 1 for each engine asleep now (sleep mode).
	FleetSleeping = "sleeping"
	// SatStalled has a sample at each step an instance (or engine) is stalled.
	SatStalled = "stalled"
)

// asleep selects the sleep-state gauge of the states other than awake;
// it is 1 while the engine sleeps at that level.
var asleep = labels.MustNewMatcher(labels.MatchNotEqual, "sleep_state", "awake")

// FleetStallSignals are the fleet table's stall and sleep expressions,
// at the range end: the engines stalled over window (StalledSeen), and
// those asleep now.
func (b Builder) FleetStallSignals(f models.Filters, window time.Duration) []SignalExpr {
	el := b.EngineLabels()
	return []SignalExpr{
		{FleetStalled, b.StalledSeen(el, f, window)},
		{FleetSleeping, agg("max", el, b.sleepUnion(f, "", ""))},
	}
}

// StalledSeen is Stalled kept to the groups that reported before the
// window began (reportedBefore). "No progress for <window>" is what the
// fleet table, the saturation verdict and the health line say, and an
// engine watched for less than the window (a server started seconds ago,
// a fleet just added to the scrape config) cannot have shown it: its
// counters are flat for want of history. The alert needs no such guard:
// its `for:` outlasts the window.
func (b Builder) StalledSeen(gl []string, f models.Filters, window time.Duration) string {
	return "(" + b.Stalled(gl, f, window) + ") and " + onLabels(gl) + " " + b.reportedBefore(gl, f, window)
}

// Stalled is the VLLMEngineStalled alert's condition per group of labels
// gl (deploy/prometheus/rules/vllm.rules.yml): requests running or waiting
// throughout window (the minimum of each over it adds up to more than 0),
// unless the generation-token, prompt-token or finished-request counter
// increased over it, unless the engine was asleep (sleep mode) at any
// point of it, and only while its server's scrape succeeds. One guard the
// alert lacks: the engine must export one of those counters, so that an
// exporter of the queue gauges alone is not called stalled. The value is
// the smallest running plus waiting over the window.
func (b Builder) Stalled(gl []string, f models.Filters, window time.Duration) string {
	w := interval.PromDuration(window)
	return b.stalled(gl, f, window, func(fn string, key SignalKey) string { return b.fnUnion(fn, key, f, w) })
}

// stalled is Stalled with its per-series inputs (the gauges' minimum and
// the counters' increase over the window) rendered by in: raw, or the
// recorded series (StalledSeenFromRules).
func (b Builder) stalled(gl []string, f models.Filters, window time.Duration, in stallInput) string {
	w := interval.PromDuration(window)
	on := onLabels(gl)
	busy := agg("sum", gl, in("min_over_time", Running)) + " + " + agg("sum", gl, in("min_over_time", Waiting))
	moved := func(key SignalKey) string { return agg("sum", gl, in("increase", key)) + " > 0" }
	progress := moved(GenerationTokens) + " or " + moved(PromptTokens) + " or " + moved(RequestSuccess)
	slept := agg("max", gl, b.sleepUnion(f, "max_over_time", w)) + " == 1"
	id := b.IdentityLabels()
	up := agg("min", id, b.ScopedSelector("up")) + " == 1"
	counted := agg("group", gl, b.union(GenerationTokens, f, "")+" or "+b.union(PromptTokens, f, "")+" or "+b.union(RequestSuccess, f, ""))
	return "((" + busy + ") > 0 unless " + on + " (" + progress + ") unless " + on + " (" + slept + ")) and " +
		on + " " + counted + " and " + onLabels(id) + " (" + up + ")"
}

// onLabels is the vector-matching clause on the labels.
func onLabels(ls []string) string { return "on (" + strings.Join(ls, ", ") + ")" }

// sleepUnion selects the sleep-state gauge of the sleeping states under
// every prefix, through fn over window when fn is set.
func (b Builder) sleepUnion(f models.Filters, fn, window string) string {
	f.Labels = append(append(f.Labels[:0:0], f.Labels...), asleep)
	m, info := b.matchers(f), b.infoMatchers(f)
	parts := []string{}
	for _, p := range b.prefixes() {
		s := selector(p+"engine_sleep_state", m)
		if fn != "" {
			s = fn + "(" + s + "[" + window + "])"
		}
		parts = append(parts, b.joinResource(s, info))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// HealthStallSignals are the health check's stall and sleep expressions:
// the fleet table's, so that Save & test and the table name the same
// engines.
func (b Builder) HealthStallSignals(f models.Filters, window time.Duration) []SignalExpr {
	return b.FleetStallSignals(f, window)
}

// reportedBefore has a sample per group gl whose running-requests gauge
// had a sample in the window before the last one. count_over_time, not
// present_over_time, so that servers older than Prometheus 2.29 answer.
func (b Builder) reportedBefore(gl []string, f models.Filters, window time.Duration) string {
	w := interval.PromDuration(window)
	m, info := b.matchers(f), b.infoMatchers(f)
	parts := []string{}
	for _, n := range b.names(Running) {
		parts = append(parts, b.joinResource("count_over_time("+selector(n, m)+"["+w+"] offset "+w+")", info))
	}
	return agg("group", gl, strings.Join(parts, " or "))
}
