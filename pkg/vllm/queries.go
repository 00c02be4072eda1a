package vllm

import (
	"fmt"
	"math"
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

// optional reports whether a signal that only some versions expose should
// be part of a query: yes when detection saw it or detection saw nothing.
func (b Builder) optional(key SignalKey) bool {
	return !b.Detected.Found() || b.Detected.HasSignal(key)
}

// SignalExpr is one plain expression and the SignalTagLabel value its series get.
type SignalExpr struct {
	Name, Expr string
}

// QueueSignals are the queue's signals as separate plain expressions:
// running, waiting, waiting by reason (V1 since 2026) and swapped (V0).
// Measured at 1,000 engines, running them concurrently and tagging the
// series in the plugin costs Prometheus a fraction of one or-union of
// label_replace()s, which relabels every series at every step
// (scripts/bench.sh, "queue" rows).
func (b Builder) QueueSignals(g models.Grouping, f models.Filters) []SignalExpr {
	gl := b.GroupLabels(g)
	out := []SignalExpr{
		{"running", agg("sum", gl, b.union(Running, f, ""))},
		{"waiting", agg("sum", gl, b.union(Waiting, f, ""))},
	}
	if b.optional(WaitingByReason) {
		out = append(out, SignalExpr{"waiting_by_reason", agg("sum", append(gl, "reason"), b.union(WaitingByReason, f, ""))})
	}
	if b.optional(Swapped) {
		out = append(out, SignalExpr{"swapped", agg("sum", gl, b.union(Swapped, f, ""))})
	}
	return append(out, b.GatewaySignals(g)...)
}

// Queue is the queue's signals as one expression, each tagged with
// SignalTagLabel: the same answer as QueueSignals in one round trip, for
// callers that want a single query (recording rules, the raw plan the
// bench compares with).
func (b Builder) Queue(g models.Grouping, f models.Filters) string {
	sigs := b.QueueSignals(g, f)
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = tag(s.Expr, s.Name)
	}
	return or(parts)
}

// QuantileName is the SignalTagLabel value of a quantile: 0.99 → "p99".
func QuantileName(q float64) string {
	return "p" + strconv.FormatFloat(math.Round(q*100*1e6)/1e6, 'f', -1, 64)
}

// WaitTime is one expression with every requested quantile of a latency
// family, its mean, and optionally the Little's-law live wait. window is
// the rate window ($__rate_interval).
func (b Builder) WaitTime(family string, quantiles []float64, live bool, g models.Grouping, f models.Filters, window string) string {
	key := FamilySignals[family]
	gl := b.GroupLabels(g)
	var parts []string
	for _, q := range quantiles {
		hq := fmt.Sprintf("histogram_quantile(%s, %s)", strconv.FormatFloat(q, 'g', -1, 64),
			agg("sum", append([]string{"le"}, gl...), b.rateUnion(key, f, "_bucket", window)))
		parts = append(parts, tag(hq, QuantileName(q)))
	}
	mean := agg("sum", gl, b.rateUnion(key, f, "_sum", window)) + " / " + agg("sum", gl, b.rateUnion(key, f, "_count", window))
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

// EngineLabels are the labels that identify one engine.
func (b Builder) EngineLabels() []string {
	return append(append([]string(nil), b.IdentityLabels()...), "engine", "model_name")
}

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

// Rank is the per-group expression topk ranks by.
func (b Builder) Rank(rankBy string, g models.Grouping, f models.Filters, window string) (string, error) {
	gl := b.GroupLabels(g)
	switch rankBy {
	case "waiting":
		return agg("sum", gl, b.union(Waiting, f, "")), nil
	case "running":
		return agg("sum", gl, b.union(Running, f, "")), nil
	case "kv_usage":
		return agg("avg", gl, b.union(KVUsage, f, "")), nil
	case "wait_p99":
		return fmt.Sprintf("histogram_quantile(0.99, %s)", agg("sum", append([]string{"le"}, gl...), b.rateUnion(QueueTime, f, "_bucket", window))), nil
	case "preemption_rate":
		return agg("sum", gl, b.youngRateUnion(Preemptions, f, "", window)), nil
	}
	return "", fmt.Errorf("rankBy %q is unknown; allowed: waiting, running, kv_usage, wait_p99, preemption_rate", rankBy)
}

// TopKRanking is the instant query (evaluated at the range end) that picks
// the k worst groups over the whole range. rng and step are PromQL
// durations for the subquery.
func (b Builder) TopKRanking(rankBy, aggregation string, k int, g models.Grouping, f models.Filters, window, rng, step string) (string, error) {
	x, err := b.Rank(rankBy, g, f, window)
	if err != nil {
		return "", err
	}
	return topKRanking(x, aggregation, k, rng, step)
}

// topKRanking ranks the per-group expression x (see TopKRanking).
func topKRanking(x, aggregation string, k int, rng, step string) (string, error) {
	switch aggregation {
	case "max", "avg":
		return fmt.Sprintf("topk(%d, %s_over_time((%s)[%s:%s]))", k, aggregation, x, rng, step), nil
	case "last":
		return fmt.Sprintf("topk(%d, %s)", k, x), nil
	}
	return "", fmt.Errorf("aggregation %q is unknown; allowed: max, avg, last", aggregation)
}

// TopKSeries is the range query for the ranked groups: their signal series
// and, tagged "engines", the engine count and model of each instance.
// Callers keep only the ranked groups, so exactly k series come back.
func (b Builder) TopKSeries(rankBy string, g models.Grouping, f models.Filters, window string, instances []string) (string, error) {
	f.Instances = instances
	x, err := b.Rank(rankBy, g, f, window)
	if err != nil {
		return "", err
	}
	return b.topKSeries(x, g, f), nil
}

// topKSeries tags the ranked expression x (filtered to the ranked
// instances) and the engine count (see TopKSeries).
func (b Builder) topKSeries(x string, g models.Grouping, f models.Filters) string {
	engines := agg("count", append(b.GroupLabels(g), "model_name"), b.union(Running, f, ""))
	return or([]string{tag(x, "value"), tag(engines, "engines")})
}
