package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// SaturationRow is one instance (or engine) of the saturation table.
type SaturationRow struct {
	Instance, Engine, Verdict, Reason              string
	Ceiling, MeanRunning, MeanWaiting, PeakKV      float64
	MeanPreemptions, MeanArrivals, MeanCompletions float64
}

// SaturationTable builds the verdict table: instance, [engine,] verdict,
// reason, then the numbers behind it.
func SaturationTable(rows []SaturationRow, withEngine bool, executed string, notices []data.Notice) *data.Frame {
	n := len(rows)
	str := func(get func(r SaturationRow) string) []string {
		out := make([]string, n)
		for i, r := range rows {
			out[i] = get(r)
		}
		return out
	}
	num := func(name, unit string, get func(r SaturationRow) float64) *data.Field {
		out := make([]float64, n)
		for i, r := range rows {
			out[i] = get(r)
		}
		f := data.NewField(name, nil, out)
		f.Config = &data.FieldConfig{Unit: unit}
		return f
	}
	fields := []*data.Field{data.NewField("instance", nil, str(func(r SaturationRow) string { return r.Instance }))}
	if withEngine {
		fields = append(fields, data.NewField("engine", nil, str(func(r SaturationRow) string { return r.Engine })))
	}
	fields = append(fields,
		data.NewField("verdict", nil, str(func(r SaturationRow) string { return r.Verdict })),
		data.NewField("reason", nil, str(func(r SaturationRow) string { return r.Reason })),
		num("mean running", "reqs", func(r SaturationRow) float64 { return r.MeanRunning }),
		num("batch ceiling", "reqs", func(r SaturationRow) float64 { return r.Ceiling }),
		num("mean waiting", "reqs", func(r SaturationRow) float64 { return r.MeanWaiting }),
		num("kv cache peak", "percentunit", func(r SaturationRow) float64 { return r.PeakKV }),
		num("preemptions/s", "ops", func(r SaturationRow) float64 { return r.MeanPreemptions }),
		num("arrivals/s", "reqps", func(r SaturationRow) float64 { return r.MeanArrivals }),
		num("completions/s", "reqps", func(r SaturationRow) float64 { return r.MeanCompletions }),
	)
	f := data.NewFrame("saturation", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed, Notices: notices})
	return f
}

// VerdictTimeline is one instance's verdict at each step, as a frame a
// state-timeline panel draws: a time field and a verdict field labelled
// with the instance (and engine).
func VerdictTimeline(labels data.Labels, name string, times []time.Time, verdicts []string) *data.Frame {
	v := data.NewField("verdict", labels, verdicts)
	v.Config = &data.FieldConfig{DisplayNameFromDS: name}
	f := data.NewFrame(name, data.NewField("time", nil, times), v)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
	return f
}
