package query

import (
	"context"
	"slices"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The fleet table's plan on the recording rules: the load gauges, rates
// and p99s (per engine from the engine_p99 group, else from the bucket
// rates) and the stall inputs, each where the rules answer exactly.

// fleetRulePlan is the fleet table's signals planned on the rules, with
// what it tells the user.
type fleetRulePlan struct {
	sigs    []vllm.SignalExpr
	used    *ruleUse
	missing map[string][]string // columns → recorded names without series
}

// fleetOnRules replaces the fleet table's per-engine signals that the rules
// record (load gauges, rates, queue and TTFT p99, the stall inputs) with
// their recorded series when those answer the table's instant question,
// with the notice that says so; the other signals, and every signal
// otherwise, stay raw. A signal the rules would answer but whose recorded
// names have no series (a group missing or partly loaded) stays raw with
// a notice naming the group. The table reads each recorded signal at one
// instant, the range's end, so what matters is that the rules ran then
// (an evaluation within the look-back before it), not at the range's
// start: a table whose range starts before the rules began reads them
// when its end is after.
func (p *plan) fleetOnRules(ctx context.Context, sigs []vllm.SignalExpr) ([]vllm.SignalExpr, []data.Notice) {
	fp := fleetRulePlan{sigs: append([]vllm.SignalExpr(nil), sigs...), missing: map[string][]string{}}
	q := vllm.RuleQuestion{Window: p.window, Grouping: models.GroupInstanceEngine, Filters: p.query.Filters}
	rates, ratesOK := p.onRulesFor(ctx, q)
	q.Window = "" // the stall window is the setting's, not the rate window
	stall, stallOK := p.onRulesFor(ctx, q)
	p.fleetProbes(ctx, rates, ratesOK, stall, stallOK)
	if ratesOK {
		plans := p.builder.FleetFromRules(rates.rs.Prefix, p.query.Filters, rates.fit.Window)
		p.fleetP99OnRules(ctx, rates, plans)
		for name, rp := range plans {
			fp.use(ctx, p, rates, name, rp, "fleet table's "+fleetColumn(name)+" column")
		}
	}
	if stallOK {
		if rp, ok := p.fleetStallPlan(ctx, stall); ok {
			fp.use(ctx, p, stall, vllm.FleetStalled, rp, "fleet table's stall state")
		}
	}
	return fp.sigs, fp.notices()
}

// fleetProbes runs the table's shared-identity probes (the two p99s', the
// stall state's) at once, so the decisions below read their answers from
// the request's memo: each probe reads every engine's recorded series, and
// one after another they added about their sum to the table's wait.
// It asks exactly the probes the decisions will ask, under the same
// conditions.
func (p *plan) fleetProbes(ctx context.Context, rates ruleUse, ratesOK bool, stall ruleUse, stallOK bool) {
	var probes []vllm.SignalExpr
	if ratesOK && rates.fit.Exact {
		for _, rp := range p.builder.FleetP99FromRules(rates.rs.Prefix, p.query.Filters, rates.fit.Window) {
			if rates.present(rp) {
				probes = append(probes, vllm.SignalExpr{Expr: p.builder.FleetP99Shared(rp.Names[0], p.query.Filters)})
			}
		}
	}
	if stallOK {
		window := p.settings.stallWindow
		_, inputs := p.builder.StalledSeenFromRules(stall.rs.Prefix, p.builder.EngineLabels(), p.query.Filters, window)
		state, ok := p.builder.StalledStateFromRules(stall.rs.Prefix, p.query.Filters, window)
		if inputs && ok && len(stall.absent(state)) == 0 {
			probes = append(probes, vllm.SignalExpr{Expr: p.builder.StallStateShared(stall.rs.Prefix, window)})
		}
	}
	if len(probes) < 2 {
		return // nothing to overlap
	}
	_, _, _ = concurrently(probes, func(s vllm.SignalExpr) (model.Vector, []string, error) {
		return p.memo.instantQuery(ctx, s.Expr, p.timeRange.End, p.timeRange.Step)
	})
}

// fleetStallPlan is the stall column's plan on the rules: the recorded
// state, one series per engine, where it answers exactly (its name has
// series and StallStateShared finds no identity spanning two of the
// rule's servers at the table's instant), else the recorded inputs summed
// by engine (exact whatever the labels). A state the discovery did not
// find (a rule file from before the state was recorded) also leaves the
// inputs, which answer the same: slower, never different; the health
// check lists the group as partly loaded.
func (p *plan) fleetStallPlan(ctx context.Context, u ruleUse) (vllm.RulePlan, bool) {
	window := p.settings.stallWindow
	inputs, ok := p.builder.StalledSeenFromRules(u.rs.Prefix, p.builder.EngineLabels(), p.query.Filters, window)
	if !ok {
		return vllm.RulePlan{}, false
	}
	state, ok := p.builder.StalledStateFromRules(u.rs.Prefix, p.query.Filters, window)
	if !ok {
		return inputs, true
	}
	if len(u.absent(state)) > 0 {
		return inputs, true
	}
	v, _, err := p.memo.instantQuery(ctx, p.builder.StallStateShared(u.rs.Prefix, window), p.timeRange.End, p.timeRange.Step)
	if err != nil || len(v) > 0 {
		return inputs, true
	}
	return state, true
}

// use puts the plan rp in place of the signal name when its recorded
// names have series that ran at the table's instant; a plan whose names
// are missing is noted under what.
func (fp *fleetRulePlan) use(ctx context.Context, p *plan, u ruleUse, name string, rp vllm.RulePlan, what string) {
	i := slices.IndexFunc(fp.sigs, func(s vllm.SignalExpr) bool { return s.Name == name })
	if i < 0 {
		return
	}
	if missing := u.absent(rp); len(missing) > 0 {
		fp.missing[what] = missing
		return
	}
	if !p.usableAt(ctx, u, rp, p.timeRange.End) {
		return
	}
	fp.sigs[i].Expr = rp.Expr
	if fp.used == nil {
		fp.used = &u
	}
}

// notices: the rules notice when any signal reads them, and one per
// column left raw for want of recorded series.
func (fp *fleetRulePlan) notices() []data.Notice {
	var out []data.Notice
	if fp.used != nil {
		out = append(out, fp.used.notice())
	}
	whats := make([]string, 0, len(fp.missing))
	for w := range fp.missing {
		whats = append(whats, w)
	}
	slices.Sort(whats)
	prefix := models.DefaultRulePrefix
	if fp.used != nil {
		prefix = fp.used.rs.Prefix
	}
	for _, w := range whats {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: vllm.RulesMissingNotice(prefix, w, fp.missing[w])})
	}
	return out
}

// fleetP99OnRules reads the p99 columns from the engine_p99 group instead
// of the bucket rates when its names are present and no engine-label set
// holds two recorded p99 series (vllm.FleetP99Shared): a quantile per
// engine costs Prometheus one series per engine, the bucket rates one per
// bucket. Otherwise the bucket-rate plans stay (exact too).
func (p *plan) fleetP99OnRules(ctx context.Context, u ruleUse, plans map[string]vllm.RulePlan) {
	if !u.fit.Exact {
		return // the bucket rates serve nearest windows alike
	}
	for sig, rp := range p.builder.FleetP99FromRules(u.rs.Prefix, p.query.Filters, u.fit.Window) {
		if !u.present(rp) {
			continue // the bucket rates answer exactly too; health names the missing group
		}
		v, _, err := p.memo.instantQuery(ctx, p.builder.FleetP99Shared(rp.Names[0], p.query.Filters), p.timeRange.End, p.timeRange.Step)
		if err != nil || len(v) > 0 {
			continue
		}
		plans[sig] = rp
	}
}

// absent are the plan's recorded names without series.
func (u ruleUse) absent(rp vllm.RulePlan) []string {
	var out []string
	for _, n := range rp.Names {
		if !u.rs.Present[n] {
			out = append(out, n)
		}
	}
	return out
}

// fleetColumn names a fleet signal as the table's column reads.
func fleetColumn(sig string) string {
	switch sig {
	case vllm.FleetQueueP99:
		return "queue-time p99"
	case vllm.FleetTTFTP99:
		return "TTFT p99"
	case vllm.FleetPreemptions:
		return "preemptions"
	case vllm.FleetKVUsage:
		return "KV-cache"
	case vllm.FleetGenTokens:
		return "generation-token"
	}
	return sig
}
