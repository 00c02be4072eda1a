package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// SaturationRow is one instance (or engine, or role pool) of the
// saturation table.
type SaturationRow struct {
	Instance, Engine, Verdict, Reason string
	// Role is the pool's prefill/decode role, for a table by role.
	Role string

	Ceiling, MeanRunning, MeanWaiting, PeakKV      float64
	MeanPreemptions, MeanArrivals, MeanCompletions float64
}

// SaturationOptions says which columns name a row of the verdict table
// and what its frame carries besides the rows.
type SaturationOptions struct {
	// WithEngine adds the engine column (a query grouped by engine).
	WithEngine bool
	// ByRole names each row by its role pool instead of its instance (a
	// query grouped by role): a pool is what a disaggregated fleet scales,
	// prefill and decode apart.
	ByRole bool
	// Executed and Notices are empty when the table follows the series
	// frames, which carry them.
	Executed string
	Notices  []data.Notice
}

// SaturationTable builds the verdict table: instance (or role), [engine,]
// verdict, reason, then the numbers behind it.
func SaturationTable(rows []SaturationRow, o SaturationOptions) *data.Frame {
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
	name, get := "instance", func(r SaturationRow) string { return r.Instance }
	if o.ByRole {
		name, get = "role", func(r SaturationRow) string { return r.Role }
	}
	fields := []*data.Field{data.NewField(name, nil, str(get))}
	if o.WithEngine {
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
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: o.Executed, Notices: o.Notices})
	return f
}

// VerdictTimeline is one instance's verdict at each step, as a frame a
// state-timeline panel draws: a time field and a verdict field labelled
// with the instance (and engine).
func VerdictTimeline(labels data.Labels, name string, times []time.Time, verdicts []string) *data.Frame {
	f := data.NewFrame(name, data.NewField("time", nil, times), verdictField(labels, name, verdicts))
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
	return f
}

// verdictField is one group's verdicts, labelled and named for a
// state-timeline panel.
func verdictField(labels data.Labels, name string, verdicts []string) *data.Field {
	v := data.NewField("verdict", labels, verdicts)
	v.Config = &data.FieldConfig{DisplayNameFromDS: name}
	return v
}
