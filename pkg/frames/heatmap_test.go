package frames

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// bucketSeries is one cumulative le series over t0, t0+1m, ….
func bucketSeries(labels map[string]string, values ...float64) *prom.Series {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	s := &prom.Series{Labels: labels}
	for i, v := range values {
		s.Times = append(s.Times, t0.Add(time.Duration(i)*time.Minute))
		s.Values = append(s.Values, v)
	}
	return s
}

// fieldValues are the frame's bucket fields by name, in order.
func fieldValues(t *testing.T, f *data.Frame) ([]string, [][]float64) {
	t.Helper()
	var names []string
	var vals [][]float64
	for _, fd := range f.Fields[1:] {
		names = append(names, fd.Name)
		var vs []float64
		for i := 0; i < fd.Len(); i++ {
			vs = append(vs, fd.At(i).(float64))
		}
		vals = append(vals, vs)
	}
	return names, vals
}

func TestHeatmap(t *testing.T) {
	m := map[string]string{"model_name": "m", "vllm_signal": "prompt_tokens"}
	with := func(le string) map[string]string {
		out := map[string]string{"le": le}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name      string
		series    prom.Matrix
		wantNames []string
		wantVals  [][]float64
	}{
		{name: "each bucket minus the one below, bounds in numeric order, +Inf last",
			series: prom.Matrix{
				bucketSeries(with("+Inf"), 35, 10, 30),
				bucketSeries(with("10"), 30, 10, 30),
				bucketSeries(with("2"), 10, 10, 0),
			},
			wantNames: []string{"2", "10", "+Inf"},
			wantVals:  [][]float64{{10, 10, 0}, {20, 0, 30}, {5, 0, 0}}},
		{name: "two spellings of one bound are one bucket",
			series: prom.Matrix{
				bucketSeries(with("1"), 1, 2),
				bucketSeries(with("1.0"), 3, 4),
				bucketSeries(with("+Inf"), 10, 10),
			},
			wantNames: []string{"1", "+Inf"},
			wantVals:  [][]float64{{4, 6}, {6, 4}}},
		{name: "a count lower than the bucket below is 0, not negative",
			series: prom.Matrix{
				bucketSeries(with("5"), 8),
				bucketSeries(with("10"), 6),
				bucketSeries(with("+Inf"), 9),
			},
			wantNames: []string{"5", "10", "+Inf"},
			wantVals:  [][]float64{{8}, {0}, {3}}},
		{name: "a bucket missing at a step adds nothing there",
			series: prom.Matrix{
				bucketSeries(with("5"), 2, 2),
				bucketSeries(with("10"), 3),
				bucketSeries(with("+Inf"), 4, 7),
			},
			wantNames: []string{"5", "10", "+Inf"},
			wantVals:  [][]float64{{2, 2}, {1, 0}, {1, 5}}},
		{name: "a count of 1e-9 is kept, less is rounding noise and 0 (Grafana's own cut-off)",
			series: prom.Matrix{
				bucketSeries(with("1"), 1e-9, 5e-10),
				bucketSeries(with("+Inf"), 1e-9, 5e-10),
			},
			wantNames: []string{"1", "+Inf"},
			wantVals:  [][]float64{{1e-9, 0}, {0, 0}}},
		{name: "an le that is not a number is left out",
			series: prom.Matrix{
				bucketSeries(with("5"), 2),
				bucketSeries(with("many"), 100),
				bucketSeries(with("+Inf"), 4),
			},
			wantNames: []string{"5", "+Inf"},
			wantVals:  [][]float64{{2}, {2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Heatmap(tt.series, HeatmapOptions{GroupLabels: []string{"model_name"}, Unit: "short"})
			require.Len(t, fs, 1)
			f := fs[0]
			require.Equal(t, FrameTypeHeatmapRows, f.Meta.Type)
			require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
			require.Equal(t, "m prompt_tokens", f.Name)
			require.Equal(t, data.FieldTypeTime, f.Fields[0].Type())
			names, vals := fieldValues(t, f)
			require.Equal(t, tt.wantNames, names)
			require.Equal(t, tt.wantVals, vals)
			for _, fd := range f.Fields[1:] {
				require.Equal(t, fd.Name, fd.Labels["le"], "each bucket keeps its le label")
				require.Equal(t, fd.Name, fd.Config.DisplayNameFromDS)
				require.Equal(t, "short", fd.Config.Unit)
				require.Equal(t, "prompt_tokens", fd.Labels["signal"])
			}
		})
	}
}

// TestHeatmapGroups: one frame per group, named and sorted like series
// frames, the executed query and notices on the first.
func TestHeatmapGroups(t *testing.T) {
	m := prom.Matrix{
		bucketSeries(map[string]string{"model_name": "b", "le": "+Inf"}, 3),
		bucketSeries(map[string]string{"model_name": "a", "le": "+Inf"}, 5),
		bucketSeries(map[string]string{"model_name": "a", "le": "1"}, 1),
	}
	fs := Heatmap(m, HeatmapOptions{GroupLabels: []string{"model_name"}, Executed: "Expr: x\nStep: 1m", Notices: []data.Notice{{Text: "n"}}})
	require.Len(t, fs, 2)
	require.Equal(t, []string{"a", "b"}, []string{fs[0].Name, fs[1].Name})
	require.Equal(t, "Expr: x\nStep: 1m", fs[0].Meta.ExecutedQueryString)
	require.Len(t, fs[0].Meta.Notices, 1)
	require.Empty(t, fs[1].Meta.Notices)
	names, vals := fieldValues(t, fs[0])
	require.Equal(t, []string{"1", "+Inf"}, names)
	require.Equal(t, [][]float64{{1}, {4}}, vals)
}

func TestHeatmapEmptyCarriesQuery(t *testing.T) {
	fs := Heatmap(nil, HeatmapOptions{Executed: "Expr: x\nStep: 15s", Notices: []data.Notice{{Text: "n"}}})
	require.Len(t, fs, 1)
	require.Equal(t, FrameTypeHeatmapRows, fs[0].Meta.Type)
	require.Equal(t, "Expr: x\nStep: 15s", fs[0].Meta.ExecutedQueryString)
	require.Len(t, fs[0].Meta.Notices, 1)
}
