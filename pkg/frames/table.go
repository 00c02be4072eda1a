package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// RankRow is one ranked instance (or engine) of a top-k query.
type RankRow struct {
	// GPU, when node agents answered, sums the GPUs of the instance.
	GPU      *GPUSummary
	Rank     int64
	Instance string
	Engine   string
	Model    string
	Engines  int64
	Value    float64
}

// RankTable builds the top-k table: rank, instance, [engine,] model,
// engines, value (in the ranked signal's unit).
func RankTable(rows []RankRow, withEngine bool, valueName, unit, executed string) *data.Frame {
	n := len(rows)
	rank, inst, eng, mdl := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	engines, vals := make([]int64, n), make([]float64, n)
	for i, r := range rows {
		rank[i], inst[i], eng[i], mdl[i], engines[i], vals[i] = r.Rank, r.Instance, r.Engine, r.Model, r.Engines, r.Value
	}
	value := data.NewField(valueName, nil, vals)
	value.Config = &data.FieldConfig{Unit: unit}
	fields := []*data.Field{data.NewField("rank", nil, rank), data.NewField("instance", nil, inst)}
	if withEngine {
		fields = append(fields, data.NewField("engine", nil, eng))
	}
	fields = append(fields, data.NewField("model", nil, mdl), data.NewField("engines", nil, engines), value)
	fields = append(fields, gpuFields(rows)...)
	f := data.NewFrame("topk", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed})
	return f
}

// GPUSummary is what an instance's GPUs add up to.
type GPUSummary struct {
	GPUs             int64
	MemoryUsedBytes  float64
	MemoryTotalBytes float64
	// UtilPercent is the mean GPU utilisation.
	UtilPercent float64
}

// gpuFields are the GPU columns, present only when some row has GPU data.
func gpuFields(rows []RankRow) []*data.Field {
	any := false
	for _, r := range rows {
		any = any || r.GPU != nil
	}
	if !any {
		return nil
	}
	n := len(rows)
	gpus, used, total, util := make([]*int64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n)
	for i, r := range rows {
		if g := r.GPU; g != nil {
			gpus[i], used[i], total[i], util[i] = &g.GPUs, &g.MemoryUsedBytes, &g.MemoryTotalBytes, &g.UtilPercent
		}
	}
	f := []*data.Field{data.NewField("gpus", nil, gpus), data.NewField("gpu memory used", nil, used),
		data.NewField("gpu memory total", nil, total), data.NewField("gpu utilization", nil, util)}
	f[1].Config = &data.FieldConfig{Unit: "bytes"}
	f[2].Config = &data.FieldConfig{Unit: "bytes"}
	f[3].Config = &data.FieldConfig{Unit: "percent"}
	return f
}
