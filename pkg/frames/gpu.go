package frames

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// Labels of GPU series: the join keys with vLLM series are vllm_instance
// (the vLLM server's instance label) and model_name.
const (
	GPUNodeLabel     = "node"
	GPUIndexLabel    = "gpu"
	GPUUUIDLabel     = "uuid"
	GPUInstanceLabel = "vllm_instance"
	GPUModelLabel    = "model_name"
)

// maxNotices bounds the notices about failed agents, and those about
// partly read GPUs; the rest are counted in one more notice.
const maxNotices = 10

// gpuMetric is one numeric reading of a GPU, as a table column and a series.
type gpuMetric struct {
	signal, column, unit string
	value                func(agentapi.GPU) *float64
}

var gpuMetrics = []gpuMetric{
	{"memory_used", "memory used", "bytes", func(g agentapi.GPU) *float64 { return g.MemoryUsedBytes }},
	{"memory_total", "memory total", "bytes", func(g agentapi.GPU) *float64 { return g.MemoryTotalBytes }},
	{"gpu_utilization", "gpu utilization", "percent", func(g agentapi.GPU) *float64 { return g.GPUUtilPercent }},
	{"memory_utilization", "memory utilization", "percent", func(g agentapi.GPU) *float64 { return g.MemUtilPercent }},
	{"temperature", "temperature", "celsius", func(g agentapi.GPU) *float64 { return g.TemperatureC }},
	{"power", "power", "watt", func(g agentapi.GPU) *float64 { return g.PowerWatts }},
	{"power_limit", "power limit", "watt", func(g agentapi.GPU) *float64 { return g.PowerLimitWatts }},
}

// gpuRow is one GPU with the node that reported it.
type gpuRow struct {
	node string
	gpu  agentapi.GPU
}

// gpuRows flattens reports, ordered by node then GPU index.
func gpuRows(reports []agentapi.AgentReport) []gpuRow {
	var rows []gpuRow
	for _, r := range reports {
		for _, g := range r.Report.GPUs {
			rows = append(rows, gpuRow{node: r.Report.Node, gpu: g})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].node != rows[j].node {
			return rows[i].node < rows[j].node
		}
		return rows[i].gpu.Index < rows[j].gpu.Index
	})
	return rows
}

// GPUTable builds one table frame, a row per GPU: node, gpu, uuid, name,
// the readings (null where unknown) with their units, vllm instance, model
// and error. notices go on the frame.
func GPUTable(reports []agentapi.AgentReport, notices []data.Notice) *data.Frame {
	rows := gpuRows(reports)
	n := len(rows)
	node, uuid, name := make([]string, n), make([]string, n), make([]string, n)
	inst, model, errs := make([]string, n), make([]string, n), make([]string, n)
	index := make([]int64, n)
	for i, r := range rows {
		node[i], index[i], uuid[i], name[i] = r.node, int64(r.gpu.Index), r.gpu.UUID, r.gpu.Name
		inst[i], model[i], errs[i] = r.gpu.VLLMInstance, r.gpu.Model, r.gpu.Error
	}
	fields := []*data.Field{
		data.NewField("node", nil, node), data.NewField("gpu", nil, index),
		data.NewField("uuid", nil, uuid), data.NewField("name", nil, name),
	}
	for _, m := range gpuMetrics {
		fields = append(fields, metricColumn(m, rows))
	}
	fields = append(fields, data.NewField("vllm instance", nil, inst), data.NewField("model", nil, model), data.NewField("error", nil, errs))
	f := data.NewFrame("gpus", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, PreferredVisualization: data.VisTypeTable, Notices: notices})
	return f
}

func metricColumn(m gpuMetric, rows []gpuRow) *data.Field {
	vals := make([]*float64, len(rows))
	for i, r := range rows {
		vals[i] = m.value(r.gpu)
	}
	f := data.NewField(m.column, nil, vals)
	f.Config = &data.FieldConfig{Unit: m.unit}
	return f
}

// GPUSeries builds timeseries-multi frames, one per GPU and reading, each a
// single point at time at, labelled node, gpu, uuid and, where the GPU is
// mapped, vllm_instance and model_name, plus signal (the reading) so every
// series is unique. Unknown readings have no frame. An empty result is one
// empty frame; notices go on frame 0.
func GPUSeries(reports []agentapi.AgentReport, at time.Time, notices []data.Notice) data.Frames {
	var frames data.Frames
	for _, r := range gpuRows(reports) {
		for _, m := range gpuMetrics {
			if v := m.value(r.gpu); v != nil {
				frames = append(frames, gpuSeriesFrame(r, m, *v, at))
			}
		}
	}
	if len(frames) == 0 {
		frames = data.Frames{data.NewFrame("")}
	}
	for _, f := range frames {
		f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
	}
	frames[0].Meta.Notices = notices
	return frames
}

func gpuSeriesFrame(r gpuRow, m gpuMetric, v float64, at time.Time) *data.Frame {
	labels := data.Labels{
		GPUNodeLabel: r.node, GPUIndexLabel: strconv.Itoa(r.gpu.Index), GPUUUIDLabel: r.gpu.UUID, FieldSignalLabel: m.signal,
	}
	if r.gpu.VLLMInstance != "" {
		labels[GPUInstanceLabel], labels[GPUModelLabel] = r.gpu.VLLMInstance, r.gpu.Model
	}
	value := data.NewField(data.TimeSeriesValueFieldName, labels, []float64{v})
	value.Config = &data.FieldConfig{Unit: m.unit, DisplayNameFromDS: fmt.Sprintf("%s GPU %d %s", r.node, r.gpu.Index, m.column)}
	return data.NewFrame(m.signal, data.NewField(data.TimeSeriesTimeFieldName, nil, []time.Time{at.UTC()}), value)
}

// GPUNotices warns about every agent that did not answer, naming it and
// why, and about every GPU an agent could only partly read: at most ten of
// each, then a count of the rest.
func GPUNotices(res agentapi.Result) []data.Notice {
	agents := make([]string, len(res.Errors))
	for i, e := range res.Errors {
		agents[i] = e.Error()
	}
	var gpus []string
	for _, r := range gpuRows(res.Reports) {
		if r.gpu.Error != "" {
			gpus = append(gpus, fmt.Sprintf("node %s GPU %d could only be partly read: %s", r.node, r.gpu.Index, r.gpu.Error))
		}
	}
	return append(warnings(agents, "more node agents did not answer"), warnings(gpus, "more GPUs could only be partly read")...)
}

// warnings makes a warning of each text, up to maxNotices, then one that
// counts the rest.
func warnings(texts []string, more string) []data.Notice {
	var out []data.Notice
	for i, t := range texts {
		if i == maxNotices {
			return append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf("%d %s", len(texts)-maxNotices, more)})
		}
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: t})
	}
	return out
}

// GPUByInstance sums each vLLM instance's GPUs for the top-k table: memory
// used and total, and the mean utilisation of the GPUs that reported one.
func GPUByInstance(reports []agentapi.AgentReport) map[string]GPUSummary {
	out := map[string]GPUSummary{}
	utilN := map[string]int{}
	for _, r := range gpuRows(reports) {
		g := r.gpu
		if g.VLLMInstance == "" {
			continue
		}
		s := out[g.VLLMInstance]
		s.GPUs++
		s.MemoryUsedBytes += deref(g.MemoryUsedBytes)
		s.MemoryTotalBytes += deref(g.MemoryTotalBytes)
		if g.GPUUtilPercent != nil {
			s.UtilPercent += (*g.GPUUtilPercent - s.UtilPercent) / float64(utilN[g.VLLMInstance]+1)
			utilN[g.VLLMInstance]++
		}
		out[g.VLLMInstance] = s
	}
	return out
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
