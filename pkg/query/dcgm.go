package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// gpuFromDCGM answers the gpu query type from NVIDIA dcgm-exporter as
// Prometheus scraped it: one row per GPU, joined to the vLLM pod it is
// allocated to (either label layout), or series of every reading.
func (p *plan) gpuFromDCGM(ctx context.Context, o models.GPUOptions) (data.Frames, error) {
	if o.Format == "series" {
		f, _, err := p.series(ctx, p.builder.DCGMSeries(), frames.SeriesOptions{GroupLabels: []string{"Hostname", "hostname", "gpu"},
			Units: dcgmUnits()})
		return f, err
	}
	rows, expr, err := p.dcgmRows(ctx)
	if err != nil {
		return nil, err
	}
	if len(p.query.Instances) > 0 {
		rows = keepInstances(rows, p.query.Instances)
	}
	var none []data.Notice
	if len(rows) == 0 {
		none = []data.Notice{{Severity: data.NoticeSeverityInfo,
			Text: "No dcgm-exporter series (DCGM_FI_DEV_*) in this data source's scope: is dcgm-exporter scraped by this Prometheus?"}}
	}
	return data.Frames{frames.DCGMTable(rows, p.executed(expr), p.noticesFor(none))}, nil
}

// dcgmRows reads every GPU's readings at the end of the range and marks
// the GPUs allocated to a vLLM server reporting now. A GPU's pod that is
// not a vLLM server (the exporter's own, under honorLabels true) is not.
func (p *plan) dcgmRows(ctx context.Context) ([]frames.DCGMRow, string, error) {
	expr := p.builder.DCGMSelector()
	vec, _, err := p.memo.instantQuery(ctx, expr, p.timeRange.End, p.timeRange.Step)
	if err != nil {
		return nil, expr, fmt.Errorf("read dcgm-exporter series: %w", err)
	}
	gpus := vllm.DCGMGPUs(vec)
	if len(gpus) == 0 {
		return nil, expr, nil
	}
	servers, _, err := p.memo.instantQuery(ctx, p.builder.ServersByModel(), p.timeRange.End, p.timeRange.Step)
	if err != nil {
		return nil, expr, fmt.Errorf("list the vLLM servers to join GPUs to: %w", err)
	}
	modelOf := map[string]string{}
	for _, s := range servers {
		modelOf[p.builder.InstanceOf(labelMap(s.Metric))] = string(s.Metric[model.LabelName("model_name")])
	}
	rows := make([]frames.DCGMRow, len(gpus))
	for i, g := range gpus {
		rows[i].GPU = g
		if w := p.builder.Workload(g); w != "" {
			if m, ok := modelOf[w]; ok {
				rows[i].Instance, rows[i].Model = w, m
			}
		}
	}
	return rows, expr, nil
}

func keepInstances(rows []frames.DCGMRow, instances []string) []frames.DCGMRow {
	keep := map[string]bool{}
	for _, i := range instances {
		keep[i] = true
	}
	var out []frames.DCGMRow
	for _, r := range rows {
		if keep[r.Instance] {
			out = append(out, r)
		}
	}
	return out
}

func dcgmUnits() map[string]string {
	return map[string]string{vllm.DCGMUtil: "percent", vllm.DCGMFBUsed: "bytes", vllm.DCGMFBFree: "bytes",
		vllm.DCGMFBReserved: "bytes", vllm.DCGMFBTotal: "bytes", vllm.DCGMPower: "watt", vllm.DCGMTemperature: "celsius",
		vllm.DCGMSMClock: "hertz", vllm.DCGMTensor: "percentunit", vllm.DCGMGraphics: "percentunit", vllm.DCGMXID: "none"}
}

// dcgmSummaries sums each vLLM server's GPUs from dcgm-exporter, for the
// tables' GPU columns when no node agents are configured; a fleet without
// dcgm-exporter gets none. Only pods can be joined to dcgm-exporter's
// GPUs, so other identities (instance, Ray's replicas) do not ask.
func (p *plan) dcgmSummaries(ctx context.Context) (map[string]frames.GPUSummary, []data.Notice) {
	if !p.builder.PodIdentity() {
		return nil, nil
	}
	gpus, _, err := p.dcgmRows(ctx)
	if err != nil {
		return nil, []data.Notice{gpuColumnsNotice(err)}
	}
	return frames.DCGMByInstance(gpus), nil
}
