package vllm

// The waitTime type's PromQL: latency quantiles and mean of a family, the
// live wait, raw and on the recorded bucket rates.

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// FamilySignals maps the waitTime families to catalogue signals.
var FamilySignals = map[string]SignalKey{
	"queue_time": QueueTime, "ttft": TTFT, "itl": ITL, "e2e": E2E,
	"prefill": PrefillTime, "decode": DecodeTime, "inference": InferenceTime,
}

// SmallestBucket is the lowest finite histogram boundary of each latency
// signal (identical in both generations); quantiles below it are linear
// interpolation inside the first bucket, not measurements.
var SmallestBucket = map[SignalKey]float64{
	QueueTime: 0.3, TTFT: 0.001, ITL: 0.01, E2E: 0.3, PrefillTime: 0.3, DecodeTime: 0.3, InferenceTime: 0.3,
}

// QuantileName is the SignalTagLabel value of a quantile: 0.99 → "p99".
func QuantileName(q float64) string {
	return "p" + strconv.FormatFloat(math.Round(q*100*1e6)/1e6, 'f', -1, 64)
}

// WaitTime is one expression with every requested quantile of a latency
// family, its mean, and optionally the Little's-law live wait. window is
// the rate window ($__rate_interval).
func (b Builder) WaitTime(family string, quantiles []float64, live bool, g models.Grouping, f models.Filters, window string) string {
	return b.WaitTimeScoped(family, quantiles, live, g, f, models.PriorityScope{}, window)
}

// WaitTimeScoped is WaitTime split and/or filtered by vLLM's priority label
// (s). The live wait reads the waiting gauge, which has no priority: it
// stays per grouping, unfiltered.
func (b Builder) WaitTimeScoped(family string, quantiles []float64, live bool, g models.Grouping, f models.Filters,
	s models.PriorityScope, window string) string {
	key := FamilySignals[family]
	gl, pgl, pf := b.GroupLabels(g), b.PriorityGroupLabels(g, s), priorityFilters(f, s)
	var parts []string
	for _, q := range quantiles {
		hq := fmt.Sprintf("histogram_quantile(%s, %s)", strconv.FormatFloat(q, 'g', -1, 64),
			agg("sum", append([]string{"le"}, pgl...), b.rateUnion(key, pf, "_bucket", window)))
		parts = append(parts, tag(hq, QuantileName(q)))
	}
	mean := agg("sum", pgl, b.rateUnion(key, pf, "_sum", window)) + " / " + agg("sum", pgl, b.rateUnion(key, pf, "_count", window))
	parts = append(parts, tag(mean, "mean"))
	if live {
		parts = append(parts, tag(b.liveWait(gl, f, window), "live"))
	}
	return or(parts)
}

// liveWait is Little's law: W = L / λ, with L the requests waiting now and
// λ the rate at which requests leave the queue. Unlike the histogram it
// counts requests that are still waiting.
func (b Builder) liveWait(gl []string, f models.Filters, window string) string {
	return "(" + agg("sum", gl, b.union(Waiting, f, "")) + ") / (" +
		agg("sum", gl, b.youngRateUnion(QueueTime, f, "_count", window)) + ")"
}

// WaitTimeFromRules is WaitTime read from the recorded bucket, _sum and
// _count rates; the live wait, which no rule records, stays on raw series.
// A quantile or the mean that rec names (WaitQuantileRules, checked by the
// caller) is read from its recorded series instead. ok is false when the
// family has no recorded histogram.
func (b Builder) WaitTimeFromRules(prefix, family string, quantiles []float64, live bool, g models.Grouping, f models.Filters, window string,
	rec RecordedWait) (RulePlan, bool) {
	if !RecordedGrouping(g) {
		return RulePlan{}, false
	}
	key := FamilySignals[family]
	bucket := ruleLatencyName(prefix, key, "_bucket", window)
	if bucket == "" || ruleSuffix(window) == "" {
		return RulePlan{}, false
	}
	sum, count := ruleLatencyName(prefix, key, "_sum", window), ruleLatencyName(prefix, key, "_count", window)
	gl, m := b.GroupLabels(g), b.matchers(f)
	var parts []string
	var names []string
	for _, q := range quantiles {
		hq := fmt.Sprintf("histogram_quantile(%s, %s)", strconv.FormatFloat(q, 'g', -1, 64),
			agg("sum", append([]string{"le"}, gl...), selector(bucket, m)))
		if n, ok := rec.Quantiles[q]; ok {
			hq = b.recordedQuantile(n, g, f)
		} else if !slices.Contains(names, bucket) {
			names = append(names, bucket)
		}
		parts = append(parts, tag(hq, QuantileName(q)))
	}
	mean := agg("sum", gl, selector(sum, m)) + " / " + agg("sum", gl, selector(count, m))
	if rec.Mean != "" {
		mean = b.recordedQuantile(rec.Mean, g, f)
	} else {
		names = append(names, sum, count)
	}
	parts = append(parts, tag(mean, "mean"))
	if live {
		parts = append(parts, tag(b.liveWait(gl, f, window), "live"))
	}
	return RulePlan{Expr: or(parts), Names: append(names, rec.Names(quantiles)...)}, true
}
