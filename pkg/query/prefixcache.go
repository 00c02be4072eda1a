package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
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
// metric and the vLLM setting behind it, never an error (familyNotices,
// absence.go); V0's slow gauge is said here, since only this type reads it.
func (p *plan) prefixCache(ctx context.Context, _ models.PrefixCacheOptions) (data.Frames, error) {
	sigs := p.builder.PrefixCacheSignals(p.query.Grouping, p.query.Filters, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(warningNotices(warn))
	if p.builder.Detected.HasSignal(vllm.PrefixHitRate) {
		notices = append(notices, infoNotice(vllm.PrefixV0Text(p.builder.Prefix)))
	}
	notices = append(notices, p.familyNotices(ctx, m, vllm.PrefixFamilies)...)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: "short", Units: prefixUnits, Legend: p.query.Legend,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(exprsOf(sigs)...),
		Notices: notices}), nil
}
