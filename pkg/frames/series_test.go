package frames

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

func TestDisplayName(t *testing.T) {
	tests := []struct {
		name   string
		labels data.Labels
		legend string
		groups []string
		want   string
	}{
		{"grouped signal", data.Labels{"instance": "a:1", "signal": "waiting"}, "", []string{"instance"}, "a:1 waiting"},
		{"engine grouping", data.Labels{"instance": "a:1", "engine": "0", "signal": "p99"}, "", []string{"instance", "engine"}, "a:1/0 p99"},
		{"reason", data.Labels{"signal": "waiting_by_reason", "reason": "capacity"}, "", nil, "waiting (capacity)"},
		{"legend", data.Labels{"model_name": "m", "signal": "running"}, "{{model_name}}: {{ signal }} {{missing}}", nil, "m: running "},
		{"nothing", data.Labels{}, "", nil, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, DisplayName(tt.labels, tt.legend, tt.groups))
		})
	}
}

func TestTimeSeriesEmptyCarriesQuery(t *testing.T) {
	fs := TimeSeries(nil, SeriesOptions{Executed: "Expr: x\nStep: 15s", Notices: []data.Notice{{Text: "n"}}})
	require.Len(t, fs, 1)
	require.Equal(t, "Expr: x\nStep: 15s", fs[0].Meta.ExecutedQueryString)
	require.Equal(t, data.FrameTypeTimeSeriesMulti, fs[0].Meta.Type)
	require.Len(t, fs[0].Meta.Notices, 1)
}

// benchMatrix is 200 series of 1,000 points, about a busy fleet panel at
// full resolution.
func benchMatrix() prom.Matrix {
	m := make(prom.Matrix, 200)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	for i := range m {
		s := &prom.Series{Labels: map[string]string{"instance": fmt.Sprintf("10.0.0.%d:8000", i), "vllm_signal": "waiting"}}
		for j := 0; j < 1000; j++ {
			s.Times = append(s.Times, t0.Add(time.Duration(j)*15*time.Second))
			s.Values = append(s.Values, float64(j))
		}
		m[i] = s
	}
	return m
}

// BenchmarkTimeSeries converts 200 series of 1,000 points, about a busy
// fleet panel at full resolution; read it beside pkg/prom's
// BenchmarkDecodeMatrix, the cost every query pays before conversion.
func BenchmarkTimeSeries(b *testing.B) {
	m := benchMatrix()
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		_ = TimeSeries(m, SeriesOptions{GroupLabels: []string{"instance"}, Unit: "reqs"})
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N * m.Points())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/point")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/point")
}

// TestTimeSeriesLeavesSeriesAlone: frames share the decoded series with
// the result cache, so converting must not change them.
func TestTimeSeriesLeavesSeriesAlone(t *testing.T) {
	m := benchMatrix()[:2]
	fs := TimeSeries(m, SeriesOptions{GroupLabels: []string{"instance"}})
	require.Len(t, fs, 2)
	require.Equal(t, "waiting", m[0].Labels["vllm_signal"])
	require.NotContains(t, m[0].Labels, "signal")
	require.Equal(t, "waiting", fs[0].Fields[1].Labels["signal"])
	fs[0].Fields[1].Set(0, 42.0)
	require.Equal(t, 0.0, m[0].Values[0], "a frame must not write through to the cached series")
}
