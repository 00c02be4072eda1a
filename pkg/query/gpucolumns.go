package query

import (
	"context"
	"errors"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
)

// gpuSummaries sums the GPUs of each of the instances for the GPU columns
// of the top-k and fleet tables: from the node agents where they are
// configured, else from dcgm-exporter's series where Prometheus scrapes
// them. A table without either simply has no GPU columns; agents that
// fail become notices on the table, never a failed query.
func (p *plan) gpuSummaries(ctx context.Context, instances []string) (map[string]frames.GPUSummary, []data.Notice) {
	e := p.exec
	if e.Agents == nil || (len(e.Settings.Agents.URLs) == 0 && e.Settings.Agents.Job == "") {
		return p.dcgmSummaries(ctx)
	}
	// The agents' own timeout plus a second for the discovery query: a
	// slow agent costs the table its GPU columns, not the whole answer.
	ctx, cancel := context.WithTimeout(ctx, e.Settings.Agents.Timeout+time.Second)
	defer cancel()
	res, err := p.fetchGPUs(ctx, e, instances)
	if errors.Is(err, ErrNoAgents) {
		// No agents found: dcgm-exporter's series, where scraped, fill the
		// columns.
		return p.dcgmSummaries(ctx)
	}
	if err != nil {
		return nil, []data.Notice{gpuColumnsNotice(err)}
	}
	return frames.GPUByInstance(res.Reports), frames.GPUNotices(res)
}

// gpuColumnsNotice says why a table's GPU columns are empty.
func gpuColumnsNotice(err error) data.Notice {
	return data.Notice{Severity: data.NoticeSeverityWarning, Text: "GPU columns left empty: " + err.Error()}
}

// attachGPUs gives each row (of the fleet or top-k table) its instance's
// GPUs, where node agents or dcgm-exporter report them, and says what kept
// them out; gpu names a row's instance and its GPU column.
func attachGPUs[R any](ctx context.Context, p *plan, rows []R, gpu func(*R) (string, **frames.GPUSummary)) []data.Notice {
	instances := make([]string, len(rows))
	for i := range rows {
		instances[i], _ = gpu(&rows[i])
	}
	gpus, notices := p.gpuSummaries(ctx, instances)
	for i := range rows {
		inst, col := gpu(&rows[i])
		if g, ok := gpus[inst]; ok {
			*col = &g
		}
	}
	return notices
}
