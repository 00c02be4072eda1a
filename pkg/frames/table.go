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

// RankOptions says how to name the top-k table's columns and what its
// frame carries besides the rows.
type RankOptions struct {
	// WithEngine adds the engine column (a query ranking engines, not
	// instances).
	WithEngine bool
	// ValueName and Unit name the value column: the ranked signal.
	ValueName, Unit string
	Executed        string
	Notices         []data.Notice
}

// RankTable builds the top-k table: rank, instance, [engine,] model,
// engines, value (in the ranked signal's unit), then the GPU columns.
func RankTable(rows []RankRow, o RankOptions) *data.Frame {
	n := len(rows)
	rank, inst, eng, mdl := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	engines, vals := make([]int64, n), make([]float64, n)
	for i, r := range rows {
		rank[i], inst[i], eng[i], mdl[i], engines[i], vals[i] = r.Rank, r.Instance, r.Engine, r.Model, r.Engines, r.Value
	}
	value := data.NewField(o.ValueName, nil, vals)
	value.Config = &data.FieldConfig{Unit: o.Unit}
	fields := []*data.Field{data.NewField("rank", nil, rank), data.NewField("instance", nil, inst)}
	if o.WithEngine {
		fields = append(fields, data.NewField("engine", nil, eng))
	}
	fields = append(fields, data.NewField("model", nil, mdl), data.NewField("engines", nil, engines), value)
	gpus := make([]*GPUSummary, n)
	for i, r := range rows {
		gpus[i] = r.GPU
	}
	fields = append(fields, gpuFields(gpus)...)
	f := data.NewFrame("topk", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: o.Executed, Notices: o.Notices})
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

// gpuFields are the GPU columns of a table whose row i has summaries[i]
// (nil: no GPU data), present only when some row has GPU data. The top-k
// and fleet tables share them.
func gpuFields(summaries []*GPUSummary) []*data.Field {
	any := false
	for _, g := range summaries {
		any = any || g != nil
	}
	if !any {
		return nil
	}
	n := len(summaries)
	gpus, used, total, util := make([]*int64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n)
	for i, g := range summaries {
		if g != nil {
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
