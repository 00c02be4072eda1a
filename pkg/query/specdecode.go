package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// specDecode answers speculative decoding's acceptance per grouping. A
// fleet without speculative decoding gets an empty answer and an info
// notice naming the option that turns it on, never an error.
func (p *plan) specDecode(ctx context.Context, _ models.SpecDecodeOptions) (data.Frames, error) {
	sigs := p.builder.SpecDecodeSignals(p.query.Grouping, p.query.Filters, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(warningNotices(warn))
	notices = append(notices, p.specDecodeNotices(ctx, m)...)
	return frames.SpecDecode(m, frames.SeriesOptions{Legend: p.query.Legend, GroupLabels: p.builder.GroupLabels(p.query.Grouping),
		Executed: p.executed(exprsOf(sigs)...), Notices: notices}), nil
}

// specDecodeNotices explains an answer without acceptance rates (no
// engine selected, speculative decoding off, or no draft in the range)
// and groups that have a rate but no draft count (V0).
func (p *plan) specDecodeNotices(ctx context.Context, m prom.Matrix) []data.Notice {
	count := map[string]int{}
	for _, s := range m {
		count[s.Labels[vllm.SignalTagLabel]]++
	}
	if n := count[vllm.SpecAcceptanceRate]; n > 0 {
		if lacking := n - count[vllm.SpecMeanLength]; lacking > 0 {
			return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.SpecDecodeV0Text(p.builder.Prefix, lacking)}}
		}
		return nil
	}
	if none, done := p.noEngines(ctx); done {
		return none
	}
	a, ok := p.activity(ctx, vllm.SpecDraftTokens)
	switch {
	case !ok:
		return nil
	case a.Samples == 0:
		return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.SpecDecodeMissingText(p.builder.Prefix)}}
	case a.Increase == 0:
		return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.SpecDecodeIdleText(p.builder.Prefix, p.window)}}
	}
	txt := vllm.AbsenceText(vllm.SpecDraftTokens, p.builder.Prefix, "no acceptance rate can be computed", p.window, a)
	if txt == "" {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: txt}}
}
