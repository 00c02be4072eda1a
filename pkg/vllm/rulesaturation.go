package vllm

import (
	"slices"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file plans the saturation query's signals (SaturationSignals) on
// the recording rules, signal by signal, where a recorded series answers
// the same question exactly (RuleFit's conditions); the others stay raw,
// each for the reason SaturationRawWhy gives.

// SaturationRawWhy says, for each saturation signal the rules cannot
// answer exactly, why. The load group records each gauge once per
// evaluation (30s), so a function over the window of a recorded gauge
// sees one sample per evaluation where the raw one sees every scrape, and
// sees the per-engine sum or maximum where the raw one applies the
// function to each series before summing.
var SaturationRawWhy = map[string]string{
	SatWaiting: "avg_over_time of each series summed, over every scrape in the window; the recorded sum keeps one sample " +
		"per evaluation, and the mean of those is not the mean of the scrapes",
	SatRunning:     "as waiting: a mean over every scrape, which a sum recorded once per evaluation cannot give",
	SatRunningPeak: "a sum of each series' own peak over every scrape; the recorded sum's peak misses the scrapes between evaluations and peaks of a sum are not sums of peaks",
	SatKVUsage:     "max_over_time over every scrape; the recorded maximum keeps one scrape per evaluation, so a peak between evaluations is lost",
	SatQueued: "delta() of the queue gauges, extrapolated from each series' first and last scrape in the window; " +
		"over the recorded sums it extrapolates from other samples",
	SatPrefixHitRate:       "no rule records the prefix-cache hit and query counters",
	SatPrefixHitRateBefore: "no rule records the prefix-cache hit and query counters",
	SatStalled: "the stall window (not a recorded rate window) over min_over_time of the gauges, increase() of three counters, " +
		"sleep state and the server's up series, none of which is recorded",
}

// saturationRuleRates are the saturation signals that are a plain sum of
// rate() over one counter, as the load group records per engine: the
// recorded rate summed by the query's grouping is the raw answer (no
// young-series correction here, unlike the preemptions query's rate).
var saturationRuleRates = map[string]string{SatPreemptions: "num_preemptions", SatCompletions: "request_success"}

// SaturationFromRules are the saturation signals the recording rules
// answer, read from them, by signal name: the preemption and completion
// rates (completions summed over finished_reason, as the raw sum is),
// when window is a recorded one and the grouping one the rules keep.
// Every other signal stays raw (SaturationRawWhy). The expressions are
// the raw ones with the rule's per-engine rate in place of rate() over the
// raw counter, grouped and filtered the same, so they answer the same
// question where RuleFit says the labels survive.
func (b Builder) SaturationFromRules(prefix string, g models.Grouping, f models.Filters, window string) map[string]RulePlan {
	suffix := ruleSuffix(window)
	if !RecordedGrouping(g) || suffix == "" {
		return nil
	}
	gl, m := b.GroupLabels(g), b.matchers(f)
	out := make(map[string]RulePlan, len(saturationRuleRates))
	for sig, counter := range saturationRuleRates {
		name := prefix + "vllm_" + counter + ":" + suffix
		out[sig] = RulePlan{Expr: agg("sum", gl, selector(name, m)), Names: []string{name}}
	}
	return out
}

// SaturationRulesClause is what the rules notice of a saturation answer
// adds: which signals the rules answered (names as SaturationSignals
// calls them) and that the others are raw.
func SaturationRulesClause(signals []string) string {
	s := slices.Clone(signals)
	slices.Sort(s)
	return " Read from them: " + strings.Join(s, ", ") + "; every other saturation signal from raw series."
}
