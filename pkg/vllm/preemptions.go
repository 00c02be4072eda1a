package vllm

// The preemptions type's PromQL: the preemption counter per engine and its
// rate per grouping.

import (
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Preemptions returns each engine's raw preemption counter and its KV-cache
// usage in one expression. Increases are found from consecutive samples
// (not increase()), so each preemption is counted exactly once per step.
func (b Builder) Preemptions(f models.Filters) string {
	el := b.EngineLabels()
	return or([]string{
		tag(agg("max", el, b.union(Preemptions, f, "")), "preemptions"),
		tag(agg("max", el, b.union(KVUsage, f, "")), "kv_usage"),
	})
}

// PreemptionRate is preemptions per second per grouping.
func (b Builder) PreemptionRate(g models.Grouping, f models.Filters, window string) string {
	return tag(agg("sum", b.GroupLabels(g), b.youngRateUnion(Preemptions, f, "", window)), "preemption_rate")
}

// Names of the per-request preemption series (PreemptionsPerRequest).
const (
	// PerRequestMoreThanOnce is the share of finished requests preempted
	// more than once: exact, as 1 - le="1" / count.
	PerRequestMoreThanOnce = "preempted_more_than_once"
	// PerRequestAtLeastOnceMax is an upper bound on the share preempted at
	// least once: vLLM observes every finished request, never-preempted
	// ones included, so le="1" holds 0 and 1 together (its buckets.py)
	// and the exact share is not in the histogram. The requests preempted
	// once are at most sum - 2 × (more than once), so the share is at most
	// (sum - (count - le1)) / count, and at most 1.
	PerRequestAtLeastOnceMax = "preempted_at_least_once_max"
	PerRequestMean           = "mean_preemptions"
	PerRequestP99            = "p99_preemptions"
)

// PerRequestUnits are the Grafana units of the per-request series.
var PerRequestUnits = map[string]string{PerRequestMoreThanOnce: "percentunit", PerRequestAtLeastOnceMax: "percentunit",
	PerRequestMean: "short", PerRequestP99: "short"}

// leOne selects the le="1" bucket however the store writes the bound
// (vLLM's "1.0"; "1" where a store normalises it).
var leOne = labels.MustNewMatcher(labels.MatchRegexp, "le", `1(\.0)?`)

// PreemptionsPerRequest are the per-request preemption distribution's
// expressions per grouping over window, from request_num_preemptions
// (vLLM 0.30+): the shares preempted more than once (exact) and at least
// once (an upper bound), the mean and the p99 preemptions per finished
// request. Groups that finished nothing in the window have no value.
func (b Builder) PreemptionsPerRequest(g models.Grouping, f models.Filters, window string) []SignalExpr {
	gl := b.GroupLabels(g)
	one := f
	one.Labels = append(append(one.Labels[:0:0], f.Labels...), leOne)
	count := agg("sum", gl, b.rateUnion(RequestPreemptions, f, "_count", window))
	le1 := agg("sum", gl, b.rateUnion(RequestPreemptions, one, "_bucket", window))
	sum := agg("sum", gl, b.rateUnion(RequestPreemptions, f, "_sum", window))
	on := "on (" + strings.Join(gl, ", ") + ") "
	if len(gl) == 0 {
		on = ""
	}
	return []SignalExpr{
		{PerRequestMoreThanOnce, "1 - " + le1 + " / " + on + "(" + count + " > 0)"},
		{PerRequestAtLeastOnceMax, "clamp_max((" + sum + " - " + on + "(" + count + " - " + on + le1 + ")) / " + on + "(" + count + " > 0), 1)"},
		{PerRequestMean, sum + " / " + on + "(" + count + " > 0)"},
		{PerRequestP99, "histogram_quantile(0.99, " + agg("sum", append([]string{"le"}, gl...), b.rateUnion(RequestPreemptions, f, "_bucket", window)) + ")"},
	}
}
