package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// dcgmColumn is one reading of dcgm-exporter as a table column.
type dcgmColumn struct {
	key, column, unit string
}

// dcgmColumns are the gpu table's readings from dcgm-exporter, in the
// units Grafana knows: bytes for the framebuffer, hertz for the SM clock,
// 0–1 ratios for engine activity; last XID is a code, not a count.
var dcgmColumns = []dcgmColumn{
	{vllm.DCGMUtil, "gpu utilization", "percent"},
	{vllm.DCGMFBUsed, "memory used", "bytes"},
	{vllm.DCGMFBFree, "memory free", "bytes"},
	{vllm.DCGMFBReserved, "memory reserved", "bytes"},
	{vllm.DCGMFBTotal, "memory total", "bytes"},
	{vllm.DCGMPower, "power", "watt"},
	{vllm.DCGMTemperature, "temperature", "celsius"},
	{vllm.DCGMSMClock, "sm clock", "hertz"},
	{vllm.DCGMTensor, "tensor active", "percentunit"},
	{vllm.DCGMGraphics, "graphics active", "percentunit"},
	{vllm.DCGMXID, "last xid", "none"},
}

// DCGMRow is one GPU with the vLLM server and model it serves ("" when
// the GPU is not allocated to a vLLM pod).
type DCGMRow struct {
	GPU             vllm.DCGMGPU
	Instance, Model string
}

// DCGMTable builds the gpu table from dcgm-exporter: node, gpu, uuid,
// name, the readings (null where the exporter has none), the workload's
// namespace and pod, the vLLM instance and model.
func DCGMTable(rows []DCGMRow, executed string, notices []data.Notice) *data.Frame {
	n := len(rows)
	node, index, uuid, name := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ns, pod, inst, model := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, r := range rows {
		node[i], index[i], uuid[i], name[i] = r.GPU.Node, r.GPU.Index, r.GPU.UUID, r.GPU.Name
		ns[i], pod[i], inst[i], model[i] = r.GPU.Namespace, r.GPU.Pod, r.Instance, r.Model
	}
	fields := []*data.Field{data.NewField("node", nil, node), data.NewField("gpu", nil, index),
		data.NewField("uuid", nil, uuid), data.NewField("name", nil, name)}
	for _, c := range dcgmColumns {
		vals := make([]*float64, n)
		for i, r := range rows {
			if v, ok := r.GPU.Values[c.key]; ok {
				vals[i] = &v
			}
		}
		f := data.NewField(c.column, nil, vals)
		f.Config = &data.FieldConfig{Unit: c.unit}
		fields = append(fields, f)
	}
	fields = append(fields, data.NewField("namespace", nil, ns), data.NewField("pod", nil, pod),
		data.NewField("vllm instance", nil, inst), data.NewField("model", nil, model))
	f := data.NewFrame("gpus", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, PreferredVisualization: data.VisTypeTable, Notices: notices,
		ExecutedQueryString: executed})
	return f
}

// DCGMByInstance sums each vLLM instance's GPUs for the top-k table, as
// GPUByInstance does for the node agents' reports.
func DCGMByInstance(rows []DCGMRow) map[string]GPUSummary {
	out := map[string]GPUSummary{}
	utilN := map[string]int{}
	for _, r := range rows {
		if r.Instance == "" {
			continue
		}
		s := out[r.Instance]
		s.GPUs++
		s.MemoryUsedBytes += r.GPU.Values[vllm.DCGMFBUsed]
		s.MemoryTotalBytes += r.GPU.Values[vllm.DCGMFBTotal]
		if u, ok := r.GPU.Values[vllm.DCGMUtil]; ok {
			s.UtilPercent += (u - s.UtilPercent) / float64(utilN[r.Instance]+1)
			utilN[r.Instance]++
		}
		out[r.Instance] = s
	}
	return out
}
