package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// RankRow is one ranked instance (or engine) of a top-k query.
type RankRow struct {
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
	f := data.NewFrame("topk", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed})
	return f
}
