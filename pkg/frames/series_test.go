package frames

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
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
func benchMatrix() model.Matrix {
	m := make(model.Matrix, 200)
	t0 := model.TimeFromUnixNano(time.Unix(1_700_000_000, 0).UnixNano())
	for i := range m {
		s := &model.SampleStream{Metric: model.Metric{"instance": model.LabelValue(fmt.Sprintf("10.0.0.%d:8000", i)), "vllm_signal": "waiting"}}
		for j := 0; j < 1000; j++ {
			s.Values = append(s.Values, model.SamplePair{Timestamp: t0.Add(time.Duration(j) * 15 * time.Second), Value: model.SampleValue(j)})
		}
		m[i] = s
	}
	return m
}

// BenchmarkDecodeMatrixBaseline decodes the same matrix from Prometheus'
// JSON: the cost every query pays before conversion, the baseline that
// BenchmarkTimeSeries is read against.
func BenchmarkDecodeMatrixBaseline(b *testing.B) {
	raw, err := json.Marshal(benchMatrix())
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var m model.Matrix
		_ = json.Unmarshal(raw, &m)
	}
}

// BenchmarkTimeSeries converts 200 series of 1,000 points, about a busy
// fleet panel at full resolution.
func BenchmarkTimeSeries(b *testing.B) {
	m := benchMatrix()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = TimeSeries(m, SeriesOptions{GroupLabels: []string{"instance"}, Unit: "reqs"})
	}
}
