package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// workloadUnits are the units of the tokens view's signals.
var workloadUnits = map[string]string{
	vllm.WorkloadPromptMean: string(vllm.UnitTokens), vllm.WorkloadGenerationMean: string(vllm.UnitTokens),
	vllm.WorkloadRequests: "reqps", vllm.ErrorShare: string(vllm.UnitPercent), vllm.GatewayErrorShare: string(vllm.UnitPercent),
}

// workload answers the workload query: length distributions as heatmaps,
// or the token means, request rate and error shares as series.
func (p *plan) workload(ctx context.Context, o models.WorkloadOptions) (data.Frames, error) {
	if o.Heatmap() {
		return p.lengths(ctx, o)
	}
	sigs := p.builder.WorkloadSignalsScoped(p.query.Grouping, p.query.Filters, o.PriorityScope, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	tags := tagsOf(m)
	notices := p.noticesFor(warningNotices(warn))
	gateway := sigs[len(sigs)-1].Name == vllm.GatewayErrorShare
	notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.ErrorShareText(gateway)})
	if tags[vllm.WorkloadRequests] && !tags[vllm.ErrorShare] {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: noErrorReasonText})
	}
	prio := priorityNotices(m, o.PriorityScope, everySignal)
	if !filteredAway(prio, o.PriorityScope) {
		notices = append(notices, p.signalNotices(ctx, tags, []need{
			{key: vllm.RequestPromptTokens, tags: []string{vllm.WorkloadPromptMean, vllm.WorkloadRequests}, without: "no token means or request rate can be shown"},
		})...)
	}
	return frames.TimeSeries(m, frames.SeriesOptions{Units: workloadUnits, Unit: string(vllm.UnitNone), Legend: p.query.Legend,
		GroupLabels: p.builder.PriorityGroupLabels(p.query.Grouping, o.PriorityScope), Executed: p.executed(exprsOf(sigs)...),
		Notices: append(notices, prio...)}), nil
}

// noErrorReasonText explains an error share that is absent while requests finish.
const noErrorReasonText = `No error share: the selected engines finish requests but report no finished_reason="error" series (vLLM V0 and V1 releases before about 0.13 do not have that reason), so their errors cannot be told apart.`

// lengths answers a length distribution: requests finished per step in
// each length bucket, per grouping, as heatmap-rows frames.
func (p *plan) lengths(ctx context.Context, o models.WorkloadOptions) (data.Frames, error) {
	key := vllm.WorkloadFamilies[o.View]
	return p.bucketHeatmap(ctx, heatmapView{key: key, name: o.View + "_tokens", unit: vllm.UnitCount,
		cell: fmt.Sprintf("Each cell counts the requests that finished in the step (%s) with a %s length up to the bucket's bound and above the bound below it; +Inf holds those above the highest bound. Lengths are observed when a request finishes: client aborts are not counted.",
			p.timeRange.Step, o.View),
		without:  "no length distribution can be shown",
		carriers: func(ctx context.Context) []data.Notice { return p.carrierNotices(ctx, key, o.View) },
	})
}

// carrierNotices warns when some selected engines lack some of the length
// bounds the store holds for key (vLLM sizes the buckets by each engine's
// max_model_len): summed across engines, those buckets count only the
// engines that have them. Nothing when the store's bounds cannot be read
// or a probe goes unanswered.
func (p *plan) carrierNotices(ctx context.Context, key vllm.SignalKey, view string) []data.Notice {
	if bs := p.bounds(ctx, key); bs.Default || bs.Empty() {
		return nil
	}
	perBoundExpr, totalExpr := p.builder.BoundCarriers(key, p.query.Filters)
	perBound, _, err := p.memo.instantQuery(ctx, perBoundExpr, p.timeRange.End, p.timeRange.Step)
	if err != nil {
		return nil
	}
	total, _, err := p.memo.instantQuery(ctx, totalExpr, p.timeRange.End, p.timeRange.Step)
	if err != nil || len(total) == 0 {
		return nil
	}
	n := float64(total[0].Value)
	var les []string
	for _, s := range perBound {
		if float64(s.Value) < n {
			les = append(les, string(s.Metric["le"]))
		}
	}
	partial := vllm.ParseBounds(les)
	if partial.Empty() {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
		"Some of the %g selected engines lack the %s length bounds %s (vLLM sizes these buckets by each engine's max_model_len): summed together, those buckets count only the engines that have them, and the bucket above takes the rest. Group by model, or filter to engines of one context length, to keep one bucket list per heatmap.",
		n, view, partial.Text())}}
}
