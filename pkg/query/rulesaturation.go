package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// saturationOnRules plans the saturation query's signals sigs: the
// preemption and completion rates on the recorded per-engine rates when
// those answer the question (step, rate window, grouping and matchers, as
// RuleFit checks), from the rules' first evaluation on when the range
// starts before it (rulemix.go); the other signals, and every signal
// otherwise, stay raw (vllm.SaturationRawWhy says why each). The notice
// names the signals read from the rules.
func (p *plan) saturationOnRules(ctx context.Context, sigs []vllm.SignalExpr) ([]ruleMix, []data.Notice) {
	u, ok := p.onRules(ctx, p.window)
	var plans map[string]vllm.RulePlan
	if ok {
		plans = p.builder.SaturationFromRules(u.rs.Prefix, p.query.Grouping, p.query.Filters, u.fit.Window)
	}
	cs := make([]ruleCandidate, len(sigs))
	for i, s := range sigs {
		cs[i].raw = s.Expr
		cs[i].rp, cs[i].ok = plans[s.Name]
	}
	ms, notes := p.mixed(ctx, u, cs) // all raw, without a notice, when no candidate is ok
	return ms, saturationNotes(notes, sigs, ms)
}

// saturationNotes adds to the rules notice the signals it covers: a
// saturation answer mixes recorded and raw signals at every step.
func saturationNotes(notes []data.Notice, sigs []vllm.SignalExpr, ms []ruleMix) []data.Notice {
	if len(notes) == 0 {
		return notes
	}
	var onRules []string
	for i, m := range ms {
		if m.rules != "" {
			onRules = append(onRules, sigs[i].Name)
		}
	}
	out := append([]data.Notice(nil), notes...)
	out[0].Text += vllm.SaturationRulesClause(onRules)
	return out
}
