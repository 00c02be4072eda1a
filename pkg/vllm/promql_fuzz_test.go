package vllm

import (
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// FuzzBuilders feeds arbitrary label values to every builder: each
// generated expression must parse, and the matchers must match exactly the
// literal value (so no value can change the meaning of the query).
func FuzzBuilders(f *testing.F) {
	for _, v := range nastyValues {
		f.Add(v, "0")
	}
	f.Add("\xff\xfe", "1")
	f.Add(`\\\"`, `"`)
	f.Fuzz(func(t *testing.T, value, engine string) {
		if value == "" || engine == "" || !utf8.ValidString(value) || !utf8.ValidString(engine) {
			return // the query model rejects empty and non-UTF-8 filter values
		}
		b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
		filt := models.Filters{Models: []string{value}, Instances: []string{value}, Engines: []string{engine, value}}
		all := expressions(t, b, models.GroupInstanceEngine, filt)
		for name, expr := range newerExpressions(b, filt, value) {
			all[name] = expr
		}
		for name, expr := range all {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
			if err != nil {
				t.Fatalf("%s does not parse: %v\n%s", name, err, expr)
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				for _, m := range vs.LabelMatchers {
					if m.Name == "model_name" && !m.Matches(value) {
						t.Fatalf("%s: matcher %s does not match %q", name, m, value)
					}
					if m.Name == "model_name" && m.Matches(value+"x") {
						t.Fatalf("%s: matcher %s also matches %q", name, m, value+"x")
					}
					if m.Name == PriorityLabelName && (!m.Matches(value) || !m.Matches("<-1") || (value != "<-1" && m.Matches(value+"x"))) {
						t.Fatalf("%s: matcher %s does not match exactly %q and <-1", name, m, value)
					}
				}
				return nil
			})
		}
	})
}

// newerExpressions are the builders added for stalled engines and the
// store's bucket bounds, whose selectors need not carry the metric prefix
// in their name (up{}, {__name__=~...}), so expressions() cannot check
// them; the fuzz target checks that they parse and match value exactly.
func newerExpressions(b Builder, f models.Filters, value string) map[string]string {
	carriers, total := b.BoundCoverage(TTFT, f, []string{value, "1.0"})
	out := map[string]string{
		"stalled":        b.Stalled(b.EngineLabels(), f, 3*time.Minute),
		"bucket lookup":  b.BucketSelector(ITL, f),
		"bound carriers": carriers,
		"bound total":    total,
	}
	for i, s := range b.FleetStallSignals(f, time.Minute) {
		out["fleet stall "+strconv.Itoa(i)] = s.Expr
	}
	for _, s := range b.SpecDecodeSignals(models.GroupInstanceEngine, f, "1m") {
		out["spec decode "+s.Name] = s.Expr
	}
	out["lora"] = b.LoRA(f)
	for _, s := range b.PrefixCacheSignals(models.GroupInstanceEngine, f, "1m") {
		out["prefix cache "+s.Name] = s.Expr
	}
	out["prefix hit rate before"] = b.PrefixHitRate(b.EngineLabels(), f, "1m", "1m")
	for _, s := range b.KVTransferSignals([]float64{0.5, 0.99}, models.GroupRole, f, "1m") {
		out["kv transfer "+s.Name] = s.Expr
	}
	role, _ := b.FleetRoleSignal(f)
	out["fleet role"] = role.Expr
	gw := b
	gw.Gateway = true
	for _, s := range gw.WorkloadSignals(models.GroupModel, f, "1m") {
		out["workload "+s.Name] = s.Expr
	}
	out["length buckets"] = b.HistogramBuckets(RequestPromptTokens, models.GroupInstanceEngine, f, "1m", time.Minute, true)
	out["length buckets smoothed"] = b.HistogramBuckets(RequestGenerationTokens, models.GroupNone, f, "1m", 15*time.Second, false)
	perBound, all := b.BoundCarriers(RequestPromptTokens, f)
	out["length carriers"], out["length carriers total"] = perBound, all
	for _, s := range b.SLOSignals(Availability(0.999, "28d"), models.GroupInstanceEngine, f) {
		out["availability "+s.Name] = s.Expr
	}
	addPriorityExpressions(out, b, f, value)
	return out
}

// addPriorityExpressions adds the priority-scoped builders with value as
// a priority class beside "<-1" (the table admits only vLLM's five
// classes; the quoting must hold for any value).
func addPriorityExpressions(out map[string]string, b Builder, f models.Filters, value string) {
	s := models.PriorityScope{ByPriority: true, Priorities: []string{value, "<-1"}}
	out["wait by priority"] = b.WaitTimeScoped("queue_time", []float64{0.99}, true, models.GroupInstanceEngine, f, s, "1m")
	for _, sig := range b.QueueByPriority(models.GroupModel, f, s, "1m") {
		out["queue by priority "+sig.Name] = sig.Expr
	}
	for _, sig := range b.SLOSignalsScoped(Objective{Key: TTFT, Bound: 1, Target: 0.99, Window: "1h"}, models.GroupModel, f, s) {
		out["slo by priority "+sig.Name] = sig.Expr
	}
	for _, sig := range b.WorkloadSignalsScoped(models.GroupNone, f, s, "1m") {
		out["workload by priority "+sig.Name] = sig.Expr
	}
}
