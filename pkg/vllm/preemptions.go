package vllm

// The preemptions type's PromQL: the preemption counter per engine and its
// rate per grouping.

import (
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
