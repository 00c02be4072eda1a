package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The heatmap of any histogram family, shared by the workload type's
// length distributions and the waitTime type's latency distributions:
// requests (or token gaps) observed per step in each bucket, per grouping.

// minScrapesPerStep is how many scrapes a step must span for its own
// increase: Grafana's $__rate_interval asks for four.
const minScrapesPerStep = 4

// heatmapView is what a heatmap shows and how its notices word it.
type heatmapView struct {
	key  vllm.SignalKey
	name string // the series' signal tag (prompt_tokens, ttft_seconds…)
	unit vllm.Unit
	// cell says what one cell counts.
	cell string
	// without says what is lost when the family is absent.
	without string
	// carriers adds notices about engines that lack some bounds; nil
	// when the family's bounds do not vary between engines of a fleet.
	carriers func(context.Context) []data.Notice
}

// bucketHeatmap answers v as heatmap-rows frames, one per group: the
// increase over exactly the step when the step spans minScrapesPerStep
// scrapes (the steps then tile the range and add up), else the rate over
// the window times the step, with a notice that says it is smoothed.
func (p *plan) bucketHeatmap(ctx context.Context, v heatmapView) (data.Frames, error) {
	perStep := p.timeRange.Step >= minScrapesPerStep*p.settings.scrape
	expr := p.builder.HistogramBuckets(v.key, p.query.Grouping, p.query.Filters, p.window, p.timeRange.Step, perStep)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	series := make(prom.Matrix, len(m))
	for i, s := range m {
		series[i] = tagged(s, v.name)
	}
	notices := p.noticesFor(warningNotices(warn))
	notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: v.cell})
	if !perStep {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
			"The step (%s) holds fewer than %d scrapes, so each count is the rate over %s times the step: an estimate smoothed over that window, not the step's exact count. A longer step (Min interval) gives exact counts per step.",
			p.timeRange.Step, minScrapesPerStep, p.window)})
	}
	if v.carriers != nil {
		notices = append(notices, v.carriers(ctx)...)
	}
	notices = append(notices, p.signalNotices(ctx, map[string]bool{v.name: len(m) > 0}, []need{
		{key: v.key, tags: []string{v.name}, without: v.without},
	})...)
	return frames.Heatmap(series, frames.HeatmapOptions{Legend: p.query.Legend, GroupLabels: p.builder.GroupLabels(p.query.Grouping),
		Unit: string(v.unit), Executed: p.executed(expr), Notices: notices}), nil
}
