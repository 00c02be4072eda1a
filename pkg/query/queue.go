package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The queue type: its handler and its plan on the recorded sums (queueSignals).

// queue runs each signal as its own plain expression, concurrently (see
// vllm.QueueSignals for why), and tags the series here.
func (p *plan) queue(ctx context.Context, o models.QueueOptions) (data.Frames, error) {
	sigs := p.builder.QueueSignals(p.query.Grouping, p.query.Filters)
	if r, ok := p.builder.QueueRejected(p.query.Grouping, p.query.Filters, p.window); ok {
		sigs = append(sigs, r)
	}
	sigs = append(sigs, p.builder.QueueByPriority(p.query.Grouping, p.query.Filters, o.PriorityScope, p.window)...)
	mixes, ruleNotes := p.queueSignals(ctx, sigs)
	m, warn, err := p.mixedSignals(ctx, sigs, mixes)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	missing := p.signalNotices(ctx, tagsOf(m), []need{
		{key: vllm.Running, tags: []string{"running"}, without: "the running series are left out"},
		{key: vllm.Waiting, tags: []string{"waiting"}, without: "the waiting series are left out"},
	})
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitRequests), Legend: p.query.Legend, Units: queueUnits,
		GroupLabels: p.builder.PriorityGroupLabels(p.query.Grouping, o.PriorityScope), Executed: p.executed(mixExprs(mixes)...),
		Notices: p.noticesFor(ruleNotes, warningNotices(warn), p.gatewayNotices(m), roleNotes, missing,
			queuePriorityNotices(m, o.PriorityScope))}), nil
}

// queuePriorityNotices: under a priority scope, what the gauges cannot
// split, then what the per-class series could not.
func queuePriorityNotices(m prom.Matrix, s models.PriorityScope) []data.Notice {
	if !s.PriorityActive() {
		return nil
	}
	perClass := func(signal string) bool {
		return signal == vllm.QueueServedSignal || signal == vllm.QueueTimeMeanSignal
	}
	return append([]data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.QueueByPriorityText}},
		priorityNotices(m, s, perClass)...)
}

// queueUnits are the units of the queue's series that are not requests: the
// picker's (gatewayUnits) and the rejected rate.
var queueUnits = func() map[string]string {
	out := map[string]string{vllm.QueueRejectedSignal: "reqps", vllm.QueueServedSignal: "reqps",
		vllm.QueueTimeMeanSignal: string(vllm.UnitSeconds)}
	for k, v := range gatewayUnits {
		out[k] = v
	}
	return out
}()

// queueSignals are the plans of the queue's expressions sigs, with running
// and waiting read from the recorded sums when they answer the question
// (from the rules' first evaluation on when the range starts before it).
func (p *plan) queueSignals(ctx context.Context, sigs []vllm.SignalExpr) ([]ruleMix, []data.Notice) {
	u, ok := p.onRules(ctx, "")
	cs := make([]ruleCandidate, len(sigs))
	for i, s := range sigs {
		cs[i].raw = s.Expr
		if ok {
			cs[i].rp, cs[i].ok = p.builder.QueueSignalFromRules(u.rs.Prefix, s.Name, p.query.Grouping, p.query.Filters)
		}
	}
	return p.mixed(ctx, u, cs) // all raw, without a notice, when no candidate is ok
}
