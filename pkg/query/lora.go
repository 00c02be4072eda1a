package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// lora answers the LoRA adapters of each server: a table of the newest
// set (format table) or the running and waiting counts over time (format
// series). The adapters are names inside label values, which PromQL
// cannot count, so the gauge's series are fetched over the range and read
// in Go (vllm.LoRAStates). Servers without LoRA are left out with an info
// notice, never an error.
func (p *plan) lora(ctx context.Context, o models.LoRAOptions) (data.Frames, error) {
	expr := p.builder.LoRA(p.query.Filters)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	var on []vllm.LoRAServer
	var off []string
	servers := vllm.LoRAStates(m, p.builder.IdentityLabels(), p.builder.InstanceOf)
	for _, s := range servers {
		if s.Latest.Enabled() {
			on = append(on, s)
		} else {
			off = append(off, s.Instance)
		}
	}
	notices := p.noticesFor(warningNotices(warn))
	notices = append(notices, p.loraNotices(ctx, len(servers), off)...)
	if vllm.SameLists(on) {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.LoRASameListsText(p.builder.Prefix)})
	}
	executed := p.executed(expr)
	if o.Format == "series" {
		return frames.LoRASeries(on, p.builder.IdentityLabels(), p.query.Legend, executed, notices), nil
	}
	return data.Frames{frames.LoRATable(on, executed, notices)}, nil
}

// loraNotices says why servers are missing from the answer: none
// selected, LoRA not enabled (no gauge, V1), or enabled on only some (the
// gauge says max_lora 0, V0).
func (p *plan) loraNotices(ctx context.Context, servers int, off []string) []data.Notice {
	info := func(txt string) []data.Notice { return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: txt}} }
	switch {
	case servers > 0 && len(off) == servers:
		return info(vllm.LoRADisabledText(off, true))
	case len(off) > 0:
		return info(vllm.LoRADisabledText(off, false))
	case servers > 0:
		return nil
	}
	if none, done := p.noEngines(ctx); done {
		return none
	}
	return info(vllm.LoRAMissingText(p.builder.Prefix))
}
