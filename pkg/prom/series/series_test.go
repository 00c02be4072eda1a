package series

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_700_000_000, 0).UTC()

// steps is a series labelled l with one point a second from t0.
func steps(l map[string]string, vals ...float64) *Series {
	s := &Series{Labels: l}
	for i, v := range vals {
		s.Times = append(s.Times, t0.Add(time.Duration(i)*time.Second))
		s.Values = append(s.Values, v)
	}
	return s
}

// TestBetween: the window is closed at both ends and series left empty go.
func TestBetween(t *testing.T) {
	a, b := map[string]string{"instance": "a"}, map[string]string{"instance": "b"}
	m := Matrix{steps(a, 0, 1, 2, 3), steps(b, 5)}
	tests := []struct {
		name     string
		from, to time.Duration
		want     Matrix
	}{
		{name: "inner points, ends included", from: time.Second, to: 2 * time.Second, want: Matrix{{Labels: a,
			Times: []time.Time{t0.Add(time.Second), t0.Add(2 * time.Second)}, Values: []float64{1, 2}}}},
		{name: "everything", from: 0, to: 3 * time.Second, want: m},
		{name: "nothing", from: 4 * time.Second, to: 5 * time.Second, want: Matrix{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, m.Between(t0.Add(tt.from), t0.Add(tt.to)))
		})
	}
}

// TestPointsAndVector: Points counts every sample; Vector keeps each
// series' first point and skips empty series.
func TestPointsAndVector(t *testing.T) {
	m := Matrix{steps(map[string]string{"instance": "a"}, 7, 8), steps(map[string]string{"instance": "b"})}
	require.Equal(t, 2, m.Points())
	require.Equal(t, model.Vector{{Metric: model.Metric{"instance": "a"}, Value: 7,
		Timestamp: model.TimeFromUnixNano(t0.UnixNano())}}, m.Vector())
}

// TestAllocBytes pins the size classes the estimates round to.
func TestAllocBytes(t *testing.T) {
	tests := []struct{ n, want int64 }{
		{0, 0}, {1, 8}, {9, 16}, {17, 32}, {257, 288}, {1000, 1024}, {32 << 10, 32 << 10}, {32<<10 + 1, 40 << 10},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, AllocBytes(tt.n), "AllocBytes(%d)", tt.n)
	}
}

// TestLabelsBytesSameForMetric: a Series' labels and the model.Metric that
// Vector makes of them are estimated alike, as both are maps of strings.
func TestLabelsBytesSameForMetric(t *testing.T) {
	l := map[string]string{"instance": "10.0.0.1:8000", "model_name": "m", "engine": "0"}
	m := Matrix{steps(l, 1)}
	require.Equal(t, LabelsBytes(l), LabelsBytes(m.Vector()[0].Metric))
	require.Greater(t, m.SizeBytes(), LabelsBytes(l))
}
