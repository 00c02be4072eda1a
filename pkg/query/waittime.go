package query

import (
	"context"
	"fmt"
	"math"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The waitTime type: its handler, its notices and its plan on the recorded
// bucket rates (waitTimeExpr).

// waitTime answers a latency family's quantiles and mean (and the live
// wait) from one expression, on the recording rules where they answer it
// exactly (rules.go), from their first evaluation on when the range starts
// before it (rulemix.go).
func (p *plan) waitTime(ctx context.Context, o models.WaitTimeOptions) (data.Frames, error) {
	key := vllm.FamilySignals[o.Family]
	if o.Heatmap() {
		return p.latencyHeatmap(ctx, key, o.Family)
	}
	mix, ruleNotes := p.waitTimeExpr(ctx, o)
	m, warn, err := p.mixRange(ctx, mix)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	needs := []need{{key: key, tags: []string{"mean"}, without: "no quantile or mean can be computed"}}
	if o.Live {
		needs = append(needs, need{key: vllm.Waiting, tags: []string{"live"}, without: "the live wait (waiting ÷ queue-time rate) is left out"})
	}
	prio := priorityNotices(m, o.PriorityScope, notLive)
	var missing []data.Notice
	if !filteredAway(prio, o.PriorityScope) {
		missing = p.signalNotices(ctx, tagsOf(m), needs, key)
	}
	notices := p.noticesFor(ruleNotes, warningNotices(warn), waitNotices(m, key, o.Live, p.lowestBound(ctx, key)), roleNotes,
		missing, prio)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitSeconds), Legend: p.query.Legend,
		GroupLabels: p.builder.PriorityGroupLabels(p.query.Grouping, o.PriorityScope), Executed: p.executed(mix.exprs()...),
		Notices: notices}), nil
}

// notLive: every waitTime signal but the live wait reads the latency
// family, which carries the priority label.
func notLive(signal string) bool { return signal != "live" }

// waitNotices says what a latency histogram cannot show.
func waitNotices(m prom.Matrix, key vllm.SignalKey, live bool, lowest float64) []data.Notice {
	var out []data.Notice
	out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.LatencyText(key, live)})
	if live {
		out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.LiveWaitText()})
	}
	if below := belowBucket(m, lowest); below != "" {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("Some %s values are below %gs, the smallest histogram bucket: they are interpolated inside the first bucket, not measured.", below, lowest)})
	}
	return out
}

// belowBucket returns the first quantile signal with a value under lowest.
func belowBucket(m prom.Matrix, lowest float64) string {
	for _, s := range m {
		sig := s.Labels[vllm.SignalTagLabel]
		if sig == "" || sig[0] != 'p' {
			continue
		}
		for _, f := range s.Values {
			if !math.IsNaN(f) && f > 0 && f < lowest {
				return sig
			}
		}
	}
	return ""
}

// waitTimeExpr is the waitTime plan: on recorded bucket rates when they
// answer the question (exactly, or closely under the nearest policy), from
// their first evaluation on when the range starts before it (rulemix.go),
// with the notice that says so; raw otherwise.
func (p *plan) waitTimeExpr(ctx context.Context, o models.WaitTimeOptions) (ruleMix, []data.Notice) {
	raw := p.builder.WaitTimeScoped(o.Family, o.Quantiles, o.Live, p.query.Grouping, p.query.Filters, o.PriorityScope, p.window)
	u, ok := p.onRules(ctx, p.window)
	if !ok || o.PriorityActive() {
		// The recorded bucket rates are summed without the priority label.
		return rawMix(raw), nil
	}
	rp, ok := p.builder.WaitTimeFromRules(u.rs.Prefix, o.Family, o.Quantiles, o.Live, p.query.Grouping, p.query.Filters, u.fit.Window,
		p.recordedQuantiles(ctx, u, o))
	return p.mixOne(ctx, u, ruleCandidate{raw: raw, rp: rp, ok: ok})
}

// recordedQuantiles are the quantiles and mean a per-instance or
// per-engine waitTime reads from their recorded series
// (vllm.WaitQuantileRules) rather than the bucket, _sum and _count rates:
// those whose names have series and ran at the range's start, when no
// group of the query held two recorded series at a step of the range
// (vllm.WaitQuantileShared). Otherwise none: the rates answer exactly
// too, and health names a group that is missing.
func (p *plan) recordedQuantiles(ctx context.Context, u ruleUse, o models.WaitTimeOptions) vllm.RecordedWait {
	rec := p.builder.WaitQuantileRules(u.rs.Prefix, o.Family, o.Quantiles, p.query.Grouping, p.query.Filters, u.fit.Window)
	usable := func(n string) bool { return u.rs.Present[n] && u.d.covered(ctx, p, n) }
	for q, n := range rec.Quantiles {
		if !usable(n) {
			delete(rec.Quantiles, q)
		}
	}
	if rec.Mean != "" && !usable(rec.Mean) {
		rec.Mean = ""
	}
	names := rec.Names(o.Quantiles)
	if len(names) == 0 {
		return vllm.RecordedWait{}
	}
	tr := p.timeRange
	shared := p.builder.WaitQuantileShared(names[0], p.query.Grouping, p.query.Filters, tr.End.Sub(tr.Start)+tr.Step, tr.Step)
	if v, _, err := p.memo.instantQuery(ctx, shared, tr.End, tr.Step); err != nil || len(v) > 0 {
		return vllm.RecordedWait{}
	}
	return rec
}

// latencyHeatmap answers the family's distribution over time (heatmap.go):
// requests, or token gaps for itl, observed per step in each latency
// bucket. Always raw: the recorded bucket rates are rates over the rules'
// window, which cannot give the step's exact count. vLLM's latency bounds
// are one list per release (or per --custom-histogram-buckets), so a fleet
// mid-upgrade may mix lists: the frames keep every bound either list has.
func (p *plan) latencyHeatmap(ctx context.Context, key vllm.SignalKey, family string) (data.Frames, error) {
	return p.bucketHeatmap(ctx, heatmapView{key: key, name: family + "_seconds", unit: vllm.UnitCount,
		cell: vllm.LatencyHeatmapText(key, p.timeRange.Step), without: "no latency distribution can be shown"})
}
