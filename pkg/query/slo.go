package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// sloUnits: attainment and budget are shares; burn rates are multiples of
// the rate that spends exactly the budget over the window.
var sloUnits = map[string]string{"attainment": string(vllm.UnitPercent), "error_budget_left": string(vllm.UnitPercent)}

// slo answers a latency objective per grouping: attainment and budget
// over the objective's window, and the workbook's burn-rate pairs.
func (p *plan) slo(ctx context.Context, s models.SLOOptions) (data.Frames, error) {
	if s.Objective == models.SLOAvailability {
		return p.availability(ctx, s)
	}
	key := vllm.SLOFamilies[s.Family]
	bs := p.bounds(ctx, key)
	bound, snapped := bs.Snap(s.Threshold)
	o := vllm.Objective{Key: key, Bound: bound, Target: s.Target, Window: s.Window, Le: bs.Le(bound)}
	sigs := pick(p.builder.SLOSignalsScoped(o, p.query.Grouping, p.query.Filters, s.PriorityScope), s.Signals)
	mixes, ruleNotes := p.sloPlan(ctx, o, sigs, s.PriorityScope)
	m, warn, err := p.mixedSignals(ctx, sigs, mixes)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(ruleNotes, warningNotices(warn))
	notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.AttainmentText(key)})
	if snapped {
		notices = append(notices, snapNotice(s.Family, key, s.Threshold, bound, p.builder.Prefix, bs))
	}
	if !bs.Default {
		notices = append(notices, p.coverageNotices(ctx, s.Family, key, o)...)
	}
	prio := priorityNotices(m, s.PriorityScope, everySignal)
	if !filteredAway(prio, s.PriorityScope) {
		notices = append(notices, p.signalNotices(ctx, tagsOf(m), []need{{key: key, tags: models.SLOSignals,
			without: "no attainment or burn rate can be computed"}}, key)...)
	}
	return p.sloFrames(m, mixes, append(notices, prio...), s.PriorityScope), nil
}

// everySignal: every series of an slo answer reads a family with the
// priority label.
func everySignal(string) bool { return true }

// availability answers an availability objective per grouping: the share
// of finished requests that did not end in error, its budget and burn
// rates, with the same windows and outputs as a latency objective.
func (p *plan) availability(ctx context.Context, s models.SLOOptions) (data.Frames, error) {
	o := vllm.Availability(s.Target, s.Window)
	sigs := pick(p.builder.SLOSignalsScoped(o, p.query.Grouping, p.query.Filters, s.PriorityScope), s.Signals)
	mixes, ruleNotes := p.sloPlan(ctx, o, sigs, s.PriorityScope)
	m, warn, err := p.mixedSignals(ctx, sigs, mixes)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(ruleNotes, warningNotices(warn))
	notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.AvailabilityText()})
	prio := priorityNotices(m, s.PriorityScope, everySignal)
	if !filteredAway(prio, s.PriorityScope) {
		notices = append(notices, p.signalNotices(ctx, tagsOf(m), []need{{key: vllm.RequestSuccess, tags: models.SLOSignals,
			without: "no attainment or burn rate can be computed (engines without finished_reason=\"error\", V0 and V1 before about 0.13, cannot report errors)"}})...)
	}
	return p.sloFrames(m, mixes, append(notices, prio...), s.PriorityScope), nil
}

// sloFrames frames an objective's series (with the role label when
// grouped by role), every expression in the executed query.
func (p *plan) sloFrames(m prom.Matrix, mixes []ruleMix, notices []data.Notice, s models.PriorityScope) data.Frames {
	m, roleNotes := p.roleSeries(m)
	notices = append(notices, roleNotes...)
	return frames.TimeSeries(m, frames.SeriesOptions{Units: sloUnits, Unit: string(vllm.UnitNone), Legend: p.query.Legend,
		GroupLabels: p.builder.PriorityGroupLabels(p.query.Grouping, s), Executed: p.executed(mixExprs(mixes)...),
		Notices: notices})
}

// pick keeps the signals named in want, all when want is empty.
func pick(sigs []vllm.SignalExpr, want []string) []vllm.SignalExpr {
	if len(want) == 0 {
		return sigs
	}
	keep := map[string]bool{}
	for _, w := range want {
		keep[w] = true
	}
	var out []vllm.SignalExpr
	for _, s := range sigs {
		if keep[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// bounds are the le bounds the selected series of key carry over the
// query's range and one rate window before it; vLLM's defaults when the
// store cannot say.
func (p *plan) bounds(ctx context.Context, key vllm.SignalKey) vllm.Bounds {
	return p.det.Bounds(ctx, key, p.builder.BucketSelector(key, p.query.Filters), p.timeRange.Start.Add(-p.timeRange.RateInterval), p.timeRange.End)
}

// coverageNotices warns when some selected engines export the histogram
// without the objective's bound (their operators chose other bucket
// lists): their requests all count as over it. An unanswered probe adds
// nothing.
func (p *plan) coverageNotices(ctx context.Context, family string, key vllm.SignalKey, o vllm.Objective) []data.Notice {
	carriersExpr, totalExpr := p.builder.BoundCoverage(key, p.query.Filters, o.Le)
	var counts [2]float64
	for i, expr := range []string{carriersExpr, totalExpr} {
		vec, _, err := p.memo.instantQuery(ctx, expr, p.timeRange.End, p.timeRange.Step)
		if err != nil {
			return nil
		}
		if len(vec) > 0 {
			counts[i] = float64(vec[0].Value)
		}
	}
	if counts[0] >= counts[1] {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
		"%g of the %g selected engines exporting %s have no bucket bound at %ss (their bucket lists differ): attainment counts all their requests as over it. Filter the query to engines that share one bucket list.",
		counts[1]-counts[0], counts[1], family, fmtSeconds(o.Bound))}}
}

// lowestBound is the smallest bucket bound the selected series of key
// carry: quantiles under it are interpolated, not measured.
func (p *plan) lowestBound(ctx context.Context, key vllm.SignalKey) float64 {
	if bs := p.bounds(ctx, key); !bs.Default {
		return bs.Lowest()
	}
	return vllm.SmallestBucket[key]
}

// snapNotice says the threshold was moved onto a bucket bound, and which
// bounds the family has: those the selected series carry, or vLLM's
// defaults when the store could not be asked.
func snapNotice(family string, key vllm.SignalKey, threshold, bound float64, prefix string, bs vllm.Bounds) data.Notice {
	s, _ := vllm.Lookup(key)
	whose := "The bounds the selected series carry"
	if bs.Default {
		whose = "vLLM's default bounds"
	}
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
		"threshold %ss is not a bucket bound of %s (%s), so the histogram cannot count %s under it: using %ss, the nearest bound. %s for %s: %s.",
		fmtSeconds(threshold), family, strings.Join(s.WireNames(prefix), ", "), countedUnit(key), fmtSeconds(bound), whose, family, bs.Text())}
}

// countedUnit is what one observation of the family is: a gap between two
// tokens for inter-token latency (vLLM observes every gap), a finished
// request for the others.
func countedUnit(key vllm.SignalKey) string {
	if key == vllm.ITL {
		return "token gaps"
	}
	return "requests"
}

func fmtSeconds(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sloPlan is each signal's plan: on the slo recording rules where they
// answer exactly, except under a priority scope, which reads raw series
// (the rules sum each engine's requests without the priority label).
func (p *plan) sloPlan(ctx context.Context, o vllm.Objective, sigs []vllm.SignalExpr, s models.PriorityScope) ([]ruleMix, []data.Notice) {
	if !s.PriorityActive() {
		return p.sloOnRules(ctx, o, sigs)
	}
	mixes := make([]ruleMix, len(sigs))
	for i, sig := range sigs {
		mixes[i] = rawMix(sig.Expr)
	}
	return mixes, nil
}
