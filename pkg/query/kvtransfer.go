package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// kvTransfer answers how KV blocks move between prefill and decode
// engines (NIXL): each transfer-time quantile, transfers and bytes per
// second and the failure rates, per grouping (role by default), as plain
// expressions run concurrently.
func (p *plan) kvTransfer(ctx context.Context, o models.KVTransferOptions) (data.Frames, error) {
	sigs := p.builder.KVTransferSignals(o.Quantiles, p.query.Grouping, p.query.Filters, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	notices := p.noticesFor(warningNotices(warn), roleNotes)
	lowest := p.kvLowestBound(ctx)
	if below := belowBucket(m, lowest); below != "" {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
			"Some %s transfer times are below %gs, the smallest bucket of %snixl_xfer_time_seconds: they are interpolated inside the first bucket, not measured.",
			below, lowest, p.builder.Prefix)})
	}
	tags := append(vllm.KVTransferQuantileTags(o.Quantiles), vllm.KVTransfers)
	notices = append(notices, p.signalNotices(ctx, tagsOf(m), []need{
		{key: vllm.KVXferTime, tags: tags, without: kvWithout(p.builder.Prefix)},
	})...)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitSeconds), Units: vllm.KVTransferUnits, Legend: p.query.Legend,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(exprsOf(sigs)...), Notices: notices}), nil
}

// kvWithout says what a kvTransfer answer lacks without the NIXL metrics,
// naming the ones that come with them.
func kvWithout(prefix string) string {
	return fmt.Sprintf("no transfer time, transfer rate, byte rate or failure rate can be shown (%snixl_bytes_transferred, "+
		"%snixl_num_failed_transfers_total, %snixl_num_failed_notifications_total and %snixl_num_kv_expired_reqs_total come with it: "+
		"only a fleet that disaggregates prefill and decode through NixlConnector exports them)", prefix, prefix, prefix, prefix)
}

// kvLowestBound is the smallest bucket bound the selected transfer-time
// series carry; vLLM's default (5 ms) when the store cannot say.
func (p *plan) kvLowestBound(ctx context.Context) float64 {
	if bs := p.bounds(ctx, vllm.KVXferTime); !bs.Default {
		return bs.Lowest()
	}
	return vllm.KVTransferBuckets[0]
}
