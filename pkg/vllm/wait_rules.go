package vllm

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file reads waitTime's quantiles per instance and per engine from
// the recorded quantiles of the groups vllm.recording.wait_quantiles and
// vllm.recording.engine_p99 (deploy/prometheus/rules/vllm-recording.rules.yml):
// one recorded series per group and quantile instead of every bucket rate,
// what a per-instance panel over a whole fleet costs Prometheus most
// (issue 37).

// RuleWaitQuantiles are the quantiles the rules record per engine and per
// server: the waitTime query's and the shipped dashboards' defaults.
var RuleWaitQuantiles = []float64{0.5, 0.9, 0.99}

// ruleWaitFamilies are the histograms whose quantiles are recorded (the
// shipped dashboards' per-instance and per-engine panels read these two),
// as the engine_p99 group names them.
var ruleWaitFamilies = []SignalKey{QueueTime, TTFT}

// serverLevel marks a per-server quantile in its recorded name.
const serverLevel = "server_"

// waitQuantileRuleNames are the wait_quantiles group's recorded names,
// sorted: p50, p90 and the mean per engine (p99 is engine_p99's), all four
// per server, for each recorded family and window.
func waitQuantileRuleNames(prefix string) []string {
	var out []string
	for w := range RuleWindows {
		for _, key := range ruleWaitFamilies {
			for _, q := range RuleWaitQuantiles {
				if q != 0.99 {
					out = append(out, waitQuantileName(prefix, key, q, false, w))
				}
				out = append(out, waitQuantileName(prefix, key, q, true, w))
			}
			out = append(out, waitMeanName(prefix, key, false, w), waitMeanName(prefix, key, true, w))
		}
	}
	slices.Sort(out)
	return out
}

// waitQuantileName is the recorded name of quantile q of key's histogram
// per engine or per server (perServer) over the recorded window suffix
// ("rate1m"); "" when no rule records it.
func waitQuantileName(prefix string, key SignalKey, q float64, perServer bool, suffix string) string {
	if !slices.Contains(ruleWaitFamilies, key) || !slices.Contains(RuleWaitQuantiles, q) || suffix == "" {
		return ""
	}
	level := ""
	if perServer {
		level = serverLevel
	}
	return prefix + "vllm_" + ruleP99[key] + ":" + level + QuantileName(q) + "_" + suffix
}

// waitMeanName is the recorded name of key's mean (seconds observed per
// observation) per engine or per server over the window suffix; "" when
// no rule records it.
func waitMeanName(prefix string, key SignalKey, perServer bool, suffix string) string {
	if !slices.Contains(ruleWaitFamilies, key) || suffix == "" {
		return ""
	}
	level := ""
	if perServer {
		level = serverLevel
	}
	return prefix + "vllm_" + ruleP99[key] + ":" + level + "mean_" + suffix
}

// RecordedWait are the recorded series a waitTime reads in place of the
// bucket, _sum and _count rates: a quantile's recorded series by quantile,
// and the mean's ("" to read the _sum and _count rates).
type RecordedWait struct {
	Quantiles map[float64]string
	Mean      string
}

// Names are every recorded name of r, the quantiles in quantiles' order,
// then the mean.
func (r RecordedWait) Names(quantiles []float64) []string {
	var out []string
	for _, q := range quantiles {
		if n, ok := r.Quantiles[q]; ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if r.Mean != "" {
		out = append(out, r.Mean)
	}
	return out
}

// WaitQuantileRules are the recorded series that can answer the
// quantiles and mean of a waitTime question of family by grouping g under
// filters f over the recorded window: by instance the per-server series,
// by instance and engine the per-engine ones. Empty for any other
// grouping, a family no rule records, a window not recorded, and, per
// server, an engine filter (the engines are summed away); a quantile no
// rule records is left out. Each answers exactly only when every group of
// the query holds one recorded series (WaitQuantileShared checks).
func (b Builder) WaitQuantileRules(prefix, family string, quantiles []float64, g models.Grouping, f models.Filters, window string) RecordedWait {
	var perServer bool
	switch g {
	case models.GroupInstance:
		perServer = true
		if b.filtersEngine(f) {
			return RecordedWait{}
		}
	case models.GroupInstanceEngine:
	default:
		return RecordedWait{}
	}
	key, suffix := FamilySignals[family], ruleSuffix(window)
	out := RecordedWait{Quantiles: map[float64]string{}, Mean: waitMeanName(prefix, key, perServer, suffix)}
	for _, q := range quantiles {
		if n := waitQuantileName(prefix, key, q, perServer, suffix); n != "" {
			out.Quantiles[q] = n
		}
	}
	return out
}

// filtersEngine reports whether the query or the data source matches on
// the engine label, which a per-server series does not carry.
func (b Builder) filtersEngine(f models.Filters) bool {
	if len(f.Engines) > 0 {
		return true
	}
	for _, m := range append(slices.Clone(b.Scope), f.Labels...) {
		if m.Name == "engine" {
			return true
		}
	}
	return false
}

// WaitQuantileShared is an instant expression, asked at a range's end,
// that is non-empty when two recorded series of name shared one group of
// g at any step of the range (rng long, every step: a subquery, so it
// reads one sample per series and step, as the query itself does, never
// every sample of a long range): two clusters' servers with one address,
// a server that served two models, pod-less series under a pod identity.
// The raw quantile sums their buckets, which recorded quantiles cannot,
// so the query then reads the recorded bucket rates.
func (b Builder) WaitQuantileShared(name string, g models.Grouping, f models.Filters, rng, step time.Duration) string {
	sel := selector(name, b.matchers(f)) + "[" + ShortDuration(rng) + ":" + ShortDuration(step) + "]"
	return "count(" + agg("count", b.GroupLabels(g), "last_over_time("+sel+")") + " > 1)"
}

// recordedQuantile is one quantile (or the mean) read from its recorded
// series, with the group's labels only (one series per group: max is
// that series).
func (b Builder) recordedQuantile(name string, g models.Grouping, f models.Filters) string {
	return agg("max", b.GroupLabels(g), selector(name, b.matchers(f)))
}

// WaitQuantilePairs are the recorded quantiles and means a waitTime by g
// (instance or instance and engine) reads, for every recorded window, each
// raw (the histogram_quantile over the summed bucket rates, the summed
// _sum over _count rates, as WaitTime writes them) and on its recorded
// series: for the exactness tests, each pair must
// agree at the rules' evaluation instants. Empty for other groupings.
func (b Builder) WaitQuantilePairs(prefix string, g models.Grouping, f models.Filters) []StallInputPair {
	var out []StallInputPair
	for _, w := range RuleWindows {
		window := ShortDuration(w)
		for family, key := range FamilySignals {
			rec := b.WaitQuantileRules(prefix, family, RuleWaitQuantiles, g, f, window)
			for q, n := range rec.Quantiles {
				raw := "histogram_quantile(" + strconv.FormatFloat(q, 'g', -1, 64) + ", " +
					agg("sum", append([]string{"le"}, b.GroupLabels(g)...), b.rateUnion(key, f, "_bucket", window)) + ")"
				out = append(out, StallInputPair{Name: n, Raw: raw, Rules: b.recordedQuantile(n, g, f)})
			}
			if rec.Mean != "" {
				gl := b.GroupLabels(g)
				raw := agg("sum", gl, b.rateUnion(key, f, "_sum", window)) + " / " + agg("sum", gl, b.rateUnion(key, f, "_count", window))
				out = append(out, StallInputPair{Name: rec.Mean, Raw: raw, Rules: b.recordedQuantile(rec.Mean, g, f)})
			}
		}
	}
	slices.SortFunc(out, func(a, b StallInputPair) int { return strings.Compare(a.Name, b.Name) })
	return out
}
