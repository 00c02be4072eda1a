package vllm

// The queue type's PromQL: running, waiting, waiting by reason and swapped,
// raw and on the recorded sums.

import (
	"github.com/inferops/vllm-datasource/pkg/models"
)

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

// QueueRejectedSignal is the queue's "rejected" series name: requests per
// second the API server refused at its queue limits, by reason.
const QueueRejectedSignal = "rejected"

// QueueRejected is requests refused per second by the queue limits, per
// grouping and reason; ok is false where detection found no engine
// exporting admission_rejections_total (vLLM before 0.32), so an older
// fleet runs nothing more and shows no rejected series, not zero. vLLM
// counts rejections in the API server, without an engine label: grouped
// by instance and engine the series have an empty engine, and an engine
// filter hides them.
func (b Builder) QueueRejected(g models.Grouping, f models.Filters, window string) (SignalExpr, bool) {
	if !b.optional(Rejections) {
		return SignalExpr{}, false
	}
	return SignalExpr{QueueRejectedSignal, agg("sum", append(b.GroupLabels(g), "reason"), b.youngRateUnion(Rejections, f, "", window))}, true
}

// The queue's signals by priority (QueueByPriority).
const (
	// QueueServedSignal is requests per second whose queue time vLLM
	// recorded, per priority class: the classes the scheduler serves.
	QueueServedSignal = "served"
	// QueueTimeMeanSignal is their mean queue time in seconds.
	QueueTimeMeanSignal = "queue_time_mean"
)

// QueueByPriorityText is the queue's notice under a priority scope: vLLM's
// queue gauges count every class.
const QueueByPriorityText = "vLLM's running and waiting gauges have no priority label: they count every class. " +
	"The served (requests/s) and queue_time_mean series are per priority class, from the queue-time histogram, " +
	"recorded when a request finishes."

// QueueByPriority are the queue's per-priority series when the query groups
// or filters by priority (none otherwise): the rate of recorded queue times
// and their mean, by grouping and priority class. The gauges have no
// priority, so what the queue can say per class is whom it serves and how
// long they waited.
func (b Builder) QueueByPriority(g models.Grouping, f models.Filters, s models.PriorityScope, window string) []SignalExpr {
	if !s.PriorityActive() {
		return nil
	}
	pgl, pf := b.PriorityGroupLabels(g, s), priorityFilters(f, s)
	count := agg("sum", pgl, b.rateUnion(QueueTime, pf, "_count", window))
	return []SignalExpr{
		{QueueServedSignal, count},
		{QueueTimeMeanSignal, agg("sum", pgl, b.rateUnion(QueueTime, pf, "_sum", window)) + " / " + count},
	}
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

// QueueSignalFromRules is one queue signal (running or waiting) read from
// the recorded per-engine sums; ok is false for the signals no rule records.
func (b Builder) QueueSignalFromRules(prefix, signal string, g models.Grouping, f models.Filters) (RulePlan, bool) {
	if !RecordedGrouping(g) {
		return RulePlan{}, false
	}
	keys := map[string]SignalKey{"running": Running, "waiting": Waiting}
	key, ok := keys[signal]
	if !ok {
		return RulePlan{}, false
	}
	name := prefix + "vllm_" + ruleGauges[key]
	return RulePlan{Expr: agg("sum", b.GroupLabels(g), selector(name, b.matchers(f))), Names: []string{name}}, true
}
