package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// queue runs each signal as its own plain expression, concurrently (see
// vllm.QueueSignals for why), and tags the series here.
func (p *plan) queue(ctx context.Context) (data.Frames, error) {
	sigs := p.builder.QueueSignals(p.query.Grouping, p.query.Filters)
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
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitRequests), Legend: p.query.Legend, Units: gatewayUnits,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(mixExprs(mixes)...),
		Notices: p.noticesFor(ruleNotes, warningNotices(warn), p.gatewayNotices(m), roleNotes, missing)}), nil
}
