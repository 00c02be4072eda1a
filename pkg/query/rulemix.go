package query

import (
	"context"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// This file answers a range that starts before the recording rules did
// (issue 22: "mixing is allowed where a range starts before the rules
// did"): the steps before the rules' first evaluation from raw series,
// the steps from then on from the rules, as one answer.
//
// How, and why so:
//   - The rules' start is their first evaluation inside the range, found
//     only when the coverage probe at the range's start (covered) fails:
//     an instant subquery at the range's end over the rule plan's smallest
//     recorded name (vllm.RuleStartName, vllm.RuleFirstEvaluation: the
//     earliest sample's own timestamp, probed at the evaluation interval,
//     coarser then refined on long ranges). It runs through the plan's
//     memo, and the discovery keeps it (first) until its next refresh
//     (RulesTTL), so a dashboard refreshing every few seconds after the
//     rules were installed asks once per refresh of the discovery; it also
//     goes into since, so a range starting after it needs no probe at all.
//     The discovery's since alone cannot give it: since is a range start
//     at which the rules were seen, not when they began.
//   - The split is the first step of the query's grid (start + k·step)
//     at or after that evaluation: the rules answer every step from there
//     (each reads the latest evaluation at or before it) and none before.
//     A first evaluation at or after the range's end plans raw, at or
//     before its start on the rules only, as without mixing.
//   - Both parts go through the plan's memo with the plan's step, the raw
//     part over [start, split−step] and the rules part over [split, end],
//     so the shared cache and the incremental store keep working on each
//     (the rules part's start stays put while the end moves). A range
//     query is evaluated step by step, so the rules part equals the
//     all-rules plan's answer at those steps.
//   - The parts are joined series by series, by label set (prom.Splice,
//     the incremental store's join), each trimmed to its side of the split
//     first, so no step is answered twice or lost.
//   - Where several expressions answer one query (queue's signals), all
//     those on rules switch at one split, the latest of their starts, so
//     the answer has one boundary and one notice.
//   - topK's ranking, an aggregation over the range, is asked in two parts
//     at this split and joined (topk_rules.go). The fleet table is one
//     instant and needs no split: it reads the rules when they ran at its
//     instant (fleetOnRules).

// ruleMix is one expression's range plan: raw (rules ""), on the rules
// over the whole range (from zero), or raw before from and on the rules
// from from on (from is then a step of the range after its start).
type ruleMix struct {
	raw, rules string
	from       time.Time
}

// rawMix is the raw plan of expr.
func rawMix(expr string) ruleMix { return ruleMix{raw: expr} }

// exprs are the expressions the answer runs, in the order of the steps
// they answer: the executed query shows both parts of a mixed answer.
func (m ruleMix) exprs() []string {
	switch {
	case m.rules == "":
		return []string{m.raw}
	case m.from.IsZero():
		return []string{m.rules}
	}
	return []string{m.raw, m.rules}
}

// mixExprs are every plan's expressions, in order, for executed.
func mixExprs(ms []ruleMix) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.exprs()...)
	}
	return out
}

// ruleCandidate is one raw expression and its rewrite onto the rules (ok
// false when the rules record nothing that answers it).
type ruleCandidate struct {
	raw string
	rp  vllm.RulePlan
	ok  bool
}

// mixOne plans one expression: raw, on the rules, or mixed, with the
// notice that says which (none for raw). A query type that reads one
// rule plan calls this where it checked usable.
func (p *plan) mixOne(ctx context.Context, u ruleUse, c ruleCandidate) (ruleMix, []data.Notice) {
	ms, notes := p.mixed(ctx, u, []ruleCandidate{c})
	return ms[0], notes
}

// mixed plans every candidate: those whose recorded names are all present
// and seen inside the range read the rules from one split, the latest of
// their rules' starts on the step grid; the others, and all when the
// rules start at or after the range's end, stay raw.
func (p *plan) mixed(ctx context.Context, u ruleUse, cs []ruleCandidate) ([]ruleMix, []data.Notice) {
	out := make([]ruleMix, len(cs))
	onRules := make([]bool, len(cs))
	var latest time.Time
	found := false
	for i, c := range cs {
		out[i] = rawMix(c.raw)
		if !c.ok || !u.present(c.rp) {
			continue
		}
		from, ok := u.rulesFrom(ctx, p, vllm.RuleStartName(c.rp.Names))
		if !ok {
			continue
		}
		onRules[i], found = true, true
		if from.After(latest) || latest.IsZero() {
			latest = from
		}
	}
	tr := p.timeRange
	split, ok := splitStep(tr.Start, tr.End, tr.Step, latest)
	if !found || !ok {
		return out, nil
	}
	for i, c := range cs {
		if onRules[i] {
			out[i].rules = c.rp.Expr
			if split.After(tr.Start) {
				out[i].from = split
			}
		}
	}
	return out, []data.Notice{u.mixNotice(split, tr.Start, tr.End)}
}

// splitStep is the first step of the grid start + k·step at or after
// first, the rules' first evaluation: where an answer moves to the rules.
// A first at or before start gives start (rules only); ok is false when
// first is at or after end, or no step is left for the rules (raw only).
func splitStep(start, end time.Time, step time.Duration, first time.Time) (time.Time, bool) {
	if !first.After(start) {
		return start, true
	}
	if !first.Before(end) || step <= 0 {
		return time.Time{}, false
	}
	k := (first.Sub(start) + step - 1) / step
	split := start.Add(k * step)
	return split, !split.After(end)
}

// present reports whether every recorded name of rp has series.
func (u ruleUse) present(rp vllm.RulePlan) bool {
	for _, n := range rp.Names {
		if !u.rs.Present[n] {
			return false
		}
	}
	return len(rp.Names) > 0
}

// mixNotice is the rules' notice, told from when the rules answer when
// that is after the range's start.
func (u ruleUse) mixNotice(split, start, end time.Time) data.Notice {
	if !split.After(start) {
		return u.notice()
	}
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.RulesMixNotice(u.rs.Prefix, u.rs.Interval, u.fit, u.window, split, end)}
}

// rulesFrom is the time from which the recorded series name exists for
// the plan's range: at or before its start when the rules cover it (as
// covered finds), else their first evaluation inside the range; ok is
// false when no sample is in the range (or Prometheus failed: raw is
// always a right answer).
func (u ruleUse) rulesFrom(ctx context.Context, p *plan, name string) (time.Time, bool) {
	start, end := p.timeRange.Start, p.timeRange.End
	if t, ok := u.d.firstSeen(name); ok && start.Before(t) {
		return t, true
	}
	if u.d.covered(ctx, p, name) {
		return start, true
	}
	if !end.After(start) {
		return time.Time{}, false
	}
	q := vllm.FirstValue(func(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
		return p.memo.instantQuery(ctx, expr, ts, p.timeRange.Step)
	})
	t, ok, err := p.builder.RuleFirstEvaluation(ctx, q, name, start, end, u.rs.Interval)
	if err != nil || !ok {
		return time.Time{}, false
	}
	u.d.rememberFirst(name, t)
	return t, true
}

// firstSeen is the first evaluation of name a probe found since the last
// refresh of the discovery.
func (d *RuleDiscovery) firstSeen(name string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.first[name]
	return t, ok
}

// rememberFirst keeps t as name's first evaluation, and as a time from
// which the rules cover any range (since).
func (d *RuleDiscovery) rememberFirst(name string, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.first[name] = t
	if cur, ok := d.since[name]; !ok || t.Before(cur) {
		d.since[name] = t
	}
}

// mixRange answers m over the plan's range: one range query, or for a
// mixed plan the raw part and the rules part at once, joined.
func (p *plan) mixRange(ctx context.Context, m ruleMix) (prom.Matrix, []string, error) {
	switch {
	case m.rules == "":
		return p.memo.rangeQuery(ctx, m.raw, p.rng())
	case m.from.IsZero():
		return p.memo.rangeQuery(ctx, m.rules, p.rng())
	}
	before, after := p.rng(), p.rng()
	before.End, after.Start = m.from.Add(-p.timeRange.Step), m.from
	parts := []vllm.SignalExpr{{Name: "raw", Expr: m.raw}, {Name: "rules", Expr: m.rules}}
	answers, warn, err := concurrently(parts, func(s vllm.SignalExpr) (prom.Matrix, []string, error) {
		if s.Name == "raw" {
			return p.memo.rangeQuery(ctx, s.Expr, before)
		}
		return p.memo.rangeQuery(ctx, s.Expr, after)
	})
	if err != nil {
		return nil, nil, err
	}
	return spliceAt(answers[0], answers[1], p.timeRange.Start, m.from, p.timeRange.End), warn, nil
}

// spliceAt joins the raw answer's steps in [start, split) and the rules
// answer's in [split, end], series by series (by label set). The series
// are new where both parts hold one; the columns are never written.
func spliceAt(raw, rules prom.Matrix, start, split, end time.Time) prom.Matrix {
	return prom.Splice(raw.Between(start, split.Add(-time.Nanosecond)), rules.Between(split, end))
}

// mixedSignals is signals (plan.go) for plans that may be mixed: each
// signal's plan answered by mixRange, concurrently, its series tagged
// with the signal's name.
func (p *plan) mixedSignals(ctx context.Context, sigs []vllm.SignalExpr, ms []ruleMix) (prom.Matrix, []string, error) {
	byName := make(map[string]ruleMix, len(sigs))
	for i, s := range sigs {
		byName[s.Name] = ms[i]
	}
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (prom.Matrix, []string, error) {
		return p.mixRange(ctx, byName[s.Name])
	})
	if err != nil {
		return nil, nil, err
	}
	return taggedAll(answers, sigs), warn, nil
}
