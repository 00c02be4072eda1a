package query

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// hostUnits are the Grafana units of the host signals.
var hostUnits = map[string]string{"cpu_busy": "percentunit", "memory_used": "percentunit", "disk_busy": "percentunit",
	"network_receive": "Bps", "network_transmit": "Bps"}

// host answers the node exporter's view of each vLLM instance's host. A
// Prometheus without a node exporter gets an empty answer and a notice,
// never an error: the panels that show it stay blank.
func (p *plan) host(ctx context.Context, _ models.HostOptions) (data.Frames, error) {
	sigs := p.builder.HostSignals(p.query.Filters, p.window)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(warningNotices(warn))
	if len(m) == 0 {
		notices = append(notices, p.hostNotice(ctx))
	}
	return frames.TimeSeries(m, frames.SeriesOptions{Units: hostUnits, Legend: p.query.Legend,
		GroupLabels: []string{p.builder.InstanceLabel}, Executed: p.executed(exprsOf(sigs)...),
		Notices: notices}), nil
}

// hostNotice says why the host answer is empty: no node exporter at all,
// or none on the selected instances' hosts.
func (p *plan) hostNotice(ctx context.Context) data.Notice {
	vec, _, err := p.memo.instantQuery(ctx, p.builder.NodeProbe(), p.timeRange.End, p.timeRange.Step)
	if err == nil && len(vec) == 0 {
		return data.Notice{Severity: data.NoticeSeverityInfo, Text: "No node exporter is scraped (no node_cpu_seconds_total series in scope): " +
			"host CPU, memory, network and disk are not shown. Scrape prometheus-node-exporter on each vLLM host to see them."}
	}
	return data.Notice{Severity: data.NoticeSeverityWarning, Text: "No node exporter runs on the hosts of the selected vLLM instances: " +
		"hosts are matched by the host part of the instance label (10.0.3.7:8000 and 10.0.3.7:9100 are one host), so both must be scraped under the same host name or address."}
}
