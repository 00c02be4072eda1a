package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// prefixUnits are the Grafana units of the prefixCache signals (the hit
// rates and the offload tier's); the token rates take the frame's default
// unit.
var prefixUnits = func() map[string]string {
	m := map[string]string{vllm.PrefixHitRateSignal: "percentunit", vllm.PrefixExternalHitRateSignal: "percentunit"}
	for k, v := range vllm.OffloadUnits {
		m[k] = v
	}
	return m
}()

// prefixCache answers the prefix cache per grouping: hit rates, prompt
// tokens per second by source and cached prompt tokens by tier, and the
// KV-offload tier's transfers, each a plain range expression run
// concurrently. A family the fleet lacks is an info notice naming the
// metric and the vLLM setting behind it, never an error.
func (p *plan) prefixCache(ctx context.Context, _ models.PrefixCacheOptions) (data.Frames, error) {
	sigs := p.builder.PrefixCacheSignals(p.query.Grouping, p.query.Filters, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(warningNotices(warn))
	notices = append(notices, p.prefixNotices(ctx, m)...)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: "short", Units: prefixUnits, Legend: p.query.Legend,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(exprsOf(sigs)...),
		Notices: notices}), nil
}

// prefixNotices explains each prefix-cache family the answer lacks: the
// fleet does not export it (with the version and setting that do), the
// selection matches no engine, or the engines export it and looked
// nothing up. It also says when V0's gauge stands in for the counters.
func (p *plan) prefixNotices(ctx context.Context, m prom.Matrix) []data.Notice {
	var out []data.Notice
	det, prefix := p.builder.Detected, p.builder.Prefix
	if det.HasSignal(vllm.PrefixHitRate) {
		out = append(out, infoNotice(vllm.PrefixV0Text(prefix)))
	}
	present := tagsOf(m)
	var idle []vllm.PrefixFamily
	for _, fam := range vllm.PrefixFamilies {
		switch {
		case det.Found() && !fam.Present(det):
			out = append(out, infoNotice(vllm.PrefixMissingText(fam, prefix)))
		case !answered(present, fam.Signal):
			idle = append(idle, fam)
		}
	}
	if len(idle) == 0 {
		return out
	}
	if none, done := p.noEngines(ctx); done {
		return append(out, none...)
	}
	for _, fam := range idle {
		out = append(out, infoNotice(vllm.PrefixIdleText(fam, prefix, p.window)))
	}
	return out
}

// answered reports whether the answer holds the signal; a name ending in
// "*" matches every signal it begins.
func answered(present map[string]bool, signal string) bool {
	stem, wild := strings.CutSuffix(signal, "*")
	for s := range present {
		if s == signal || (wild && strings.HasPrefix(s, stem)) {
			return true
		}
	}
	return false
}

// infoNotice is a notice of severity info.
func infoNotice(text string) data.Notice {
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: text}
}
