package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// sloOnRules plans the slo query's signals sigs for objective o: each
// burn pair (and the attainment and budget when the objective's window
// is a recorded one) on the slo group's per-engine rates when they answer
// the question (step, grouping and matchers, as RuleFit checks; the
// windows are the group's own), from the rules' first evaluation on when
// the range starts before it (rulemix.go); every other signal raw. A
// signal the group would answer whose names have no series stays raw,
// with a notice naming the group.
func (p *plan) sloOnRules(ctx context.Context, o vllm.Objective, sigs []vllm.SignalExpr) ([]ruleMix, []data.Notice) {
	u, ok := p.onRulesFor(ctx, vllm.RuleQuestion{Step: p.timeRange.Step, Grouping: p.query.Grouping, Filters: p.query.Filters})
	var plans map[string]vllm.RulePlan
	if ok {
		plans = p.builder.SLOFromRules(u.rs.Prefix, o, p.query.Grouping, p.query.Filters)
	}
	cs := make([]ruleCandidate, len(sigs))
	var missing []string
	for i, s := range sigs {
		cs[i].raw = s.Expr
		cs[i].rp, cs[i].ok = plans[s.Name]
		if cs[i].ok {
			missing = appendNew(missing, u.absent(cs[i].rp)...)
		}
	}
	ms, notes := p.mixed(ctx, u, cs)
	if len(missing) > 0 {
		notes = append(notes, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: vllm.RulesMissingNotice(u.rs.Prefix, "slo signals", missing)})
	}
	return ms, sloRulesNotes(notes, sigs, ms)
}

// sloRulesNotes adds to the rules notice the signals it covers.
func sloRulesNotes(notes []data.Notice, sigs []vllm.SignalExpr, ms []ruleMix) []data.Notice {
	var onRules []string
	for i, m := range ms {
		if m.rules != "" {
			onRules = append(onRules, sigs[i].Name)
		}
	}
	if len(onRules) == 0 || len(notes) == 0 {
		return notes // raw: mixed gave no rules notice (notes[0] when it did)
	}
	out := append([]data.Notice(nil), notes...)
	out[0].Text += " Read from them: " + strings.Join(onRules, ", ") + "; every other slo signal from raw series."
	return out
}

// appendNew appends the values not in out yet.
func appendNew(out []string, vs ...string) []string {
	for _, v := range vs {
		if !contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
