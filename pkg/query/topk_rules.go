package query

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// This file plans topK on the recording rules, also over a range that
// starts before they did (rulemix.go): the ranked series are raw before
// the split and the rules' from it (mixRange), and the ranking aggregates
// the same mixed series.
//
// How the ranking is mixed, and why so:
//   - The ranking is one instant query at the range's end over the
//     subquery [rng:step], whose steps lie on multiples of the step (the
//     range's grid, pkg/interval aligns it) after end − rng. Mixed, its
//     steps before the split are asked from raw series, at the last step
//     before the split with the same lower bound end − rng (so Prometheus
//     2's closed and 3's open lower end count that step as the raw
//     ranking does), and its steps from the split from the rules, at the
//     end, over a range that reaches 1ms past the last raw step (between
//     two steps, so neither kind of lower end takes it; the rules have no
//     sample there anyway, their first evaluation being after it).
//   - Both parts are aggregated per group without topk (the range's top k
//     need not be either part's top k), and joined here exactly as one
//     pass over the mixed series: max is the larger maximum (a NaN part
//     gives way, as in max_over_time); avg is (sum + sum) / (count +
//     count); last is the rules' value at the end, the all-rules ranking.
//     rank then keeps the k worst.
//   - When the rules begin one step after the ranking's lower end, the
//     raw part would be the lower end alone, a range of zero, which
//     PromQL cannot ask: that ranking stays raw (raw is always a right
//     answer). When they begin before it, the ranking is all rules.

// topkRules is how topK reads its ranked signal: raw (on false), on the
// rules over the whole range (from zero), or raw before from and on the
// rules from it.
type topkRules struct {
	u    ruleUse
	on   bool
	from time.Time
}

// topkRules plans topK's ranked signal on the rules when they record it
// exactly (the ranked signal, and the series query's filter by the ranked
// servers' identity labels, which they keep), from their first evaluation
// on when the range starts before it; raw is the raw ranking expression.
func (p topkPlan) topkRules(ctx context.Context, raw string) (topkRules, []data.Notice) {
	w, ok := vllm.RankWindow(p.o.RankBy, p.window)
	if !ok {
		return topkRules{}, nil
	}
	f := p.query.Filters
	f.Instances = []string{"ranked"} // the series query filters by the ranked servers
	u, ok := p.onRulesWith(ctx, w, f)
	if !ok {
		return topkRules{}, nil
	}
	rp, ok := p.builder.TopKRankingFromRules(u.rs.Prefix, p.o.RankBy, "last", 1, p.query.Grouping, p.query.Filters, u.fit.Window, "", "")
	m, notes := p.mixOne(ctx, u, ruleCandidate{raw: raw, rp: rp, ok: ok})
	return topkRules{u: u, on: m.rules != "", from: m.from}, notes
}

// rankPart is one instant expression of the ranking and when it runs.
type rankPart struct {
	expr string
	at   time.Time
}

// rankPlan is topK's ranking: one topk expression (join ""), or the raw
// and the rules part joined by the aggregation join.
type rankPlan struct {
	parts []rankPart
	join  string
}

// exprs are the ranking's expressions, for executed.
func (r rankPlan) exprs() []string {
	out := make([]string, len(r.parts))
	for i, part := range r.parts {
		out[i] = part.expr
	}
	return out
}

// rankPlanFor is the ranking for tr over the subquery range rng, raw the
// raw ranking expression.
func (p topkPlan) rankPlanFor(tr topkRules, raw string, rng time.Duration) (rankPlan, error) {
	q, o, end, step := p.query, p.o, p.timeRange.End, p.timeRange.Step
	single := func(expr string) rankPlan { return rankPlan{parts: []rankPart{{expr, end}}} }
	if !tr.on {
		return single(raw), nil
	}
	prefix, window := tr.u.rs.Prefix, tr.u.fit.Window
	all, ok := p.builder.TopKRankingFromRules(prefix, o.RankBy, o.Aggregation, o.K, q.Grouping, q.Filters, window, interval.PromDuration(rng), interval.PromDuration(step))
	lower, lastRaw := end.Add(-rng), tr.from.Add(-step)
	switch {
	case !ok || lastRaw.Equal(lower) && o.Aggregation != "last":
		return single(raw), nil // lastRaw at lower: see the file's comment
	case tr.from.IsZero() || o.Aggregation == "last" || lastRaw.Before(lower):
		return single(all.Expr), nil
	}
	before, err := p.builder.TopKRankingPart(o.RankBy, o.Aggregation, q.Grouping, q.Filters, p.window, interval.PromDuration(lastRaw.Sub(lower)), interval.PromDuration(step))
	if err != nil {
		return rankPlan{}, err
	}
	after, ok := p.builder.TopKRankingPartFromRules(prefix, o.RankBy, o.Aggregation, q.Grouping, q.Filters, window, interval.PromDuration(end.Sub(lastRaw)-time.Millisecond), interval.PromDuration(step))
	if !ok {
		// Not reachable while the whole-range ranking could be built (same
		// signal, window and grouping); should a future aggregation differ,
		// the raw ranking is still a right answer where an error is not.
		return single(raw), nil
	}
	return rankPlan{parts: []rankPart{{before, lastRaw}, {after.Expr, end}}, join: o.Aggregation}, nil
}

// rankVector runs the ranking: its one expression's answer, or its parts
// at once, joined per group.
func (p topkPlan) rankVector(ctx context.Context, r rankPlan) (model.Vector, []string, error) {
	sigs, at := make([]vllm.SignalExpr, len(r.parts)), make(map[string]time.Time, len(r.parts))
	for i, part := range r.parts {
		sigs[i] = vllm.SignalExpr{Name: strconv.Itoa(i), Expr: part.expr}
		at[sigs[i].Name] = part.at
	}
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (model.Vector, []string, error) {
		return p.memo.instantQuery(ctx, s.Expr, at[s.Name], p.timeRange.Step)
	})
	if err != nil {
		return nil, nil, err
	}
	if r.join == "" {
		return answers[0], warn, nil
	}
	return joinRank(r.join, answers), warn, nil
}

// topkSeriesMix is the plan of the ranked groups' series: raw before the
// rules' split and on the rules from it, as the ranking (tr).
func (p topkPlan) topkSeriesMix(tr topkRules, raw string, instances []string) ruleMix {
	if !tr.on {
		return rawMix(raw)
	}
	rp, ok := p.builder.TopKSeriesFromRules(tr.u.rs.Prefix, p.o.RankBy, p.query.Grouping, p.query.Filters, tr.u.fit.Window, instances)
	if !ok {
		return rawMix(raw)
	}
	return ruleMix{raw: raw, rules: rp.Expr, from: tr.from}
}

// rankAcc is one group's running aggregation over the parts.
type rankAcc struct {
	metric          model.Metric
	max, sum, count float64
	seen            bool
}

// joinRank joins the parts' per-group aggregations (see the file's
// comment): max of the maxima, NaN giving way to a number; for avg the
// summed sums over the summed counts (the parts' series tagged
// vllm.RankPartSum and vllm.RankPartCount). The groups keep the order in
// which they were first seen.
func joinRank(aggregation string, parts []model.Vector) model.Vector {
	byKey := map[model.Fingerprint]*rankAcc{}
	var order []*rankAcc
	for _, v := range parts {
		for _, s := range v {
			m := s.Metric.Clone()
			tagged := string(m[vllm.SignalTagLabel])
			delete(m, vllm.SignalTagLabel)
			a, ok := byKey[m.Fingerprint()]
			if !ok {
				a = &rankAcc{metric: m, max: math.NaN()}
				byKey[m.Fingerprint()] = a
				order = append(order, a)
			}
			a.add(tagged, float64(s.Value))
		}
	}
	out := make(model.Vector, 0, len(order))
	for _, a := range order {
		if v, ok := a.value(aggregation); ok {
			out = append(out, &model.Sample{Metric: a.metric, Value: model.SampleValue(v)})
		}
	}
	return out
}

// add takes one part's value, tagged as the avg parts tag it ("" for max).
func (a *rankAcc) add(tagged string, v float64) {
	switch tagged {
	case vllm.RankPartSum:
		a.sum += v
	case vllm.RankPartCount:
		a.count += v
	default:
		if v > a.max || math.IsNaN(a.max) {
			a.max = v
		}
		a.seen = true
	}
}

// value is the group's aggregation over both parts; ok is false when no
// step of either part had a value.
func (a *rankAcc) value(aggregation string) (float64, bool) {
	if aggregation == "avg" {
		return a.sum / a.count, a.count > 0
	}
	return a.max, a.seen
}
