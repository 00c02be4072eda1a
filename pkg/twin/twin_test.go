package twin

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

// smallModel is a twin whose replica sustains about 4.5 requests/s
// (16 sequences, the simulator's default step costs and lengths as
// histograms), offered 10 requests/s.
func smallModel() Model {
	return Model{
		Fit:        StepFit{Base: 12 * time.Millisecond, PerSeq: 100 * time.Microsecond, PerPrefillToken: 14 * time.Microsecond},
		MaxNumSeqs: 16, NumGPUBlocks: 8192, BlockSize: 16,
		Prompt:   sim.Dist{Kind: sim.Empirical, Bounds: []float64{200, 500, 1000, 2000, 5000}, Weights: []float64{5, 25, 35, 25, 10}},
		Output:   sim.Dist{Kind: sim.Empirical, Bounds: []float64{50, 100, 200, 500, 1000}, Weights: []float64{10, 15, 30, 35, 10}},
		Arrivals: []float64{10, 10, 10, 10},
		Step:     time.Minute,
	}
}

func TestPredictMoreReplicasWaitLess(t *testing.T) {
	preds, err := Predict(smallModel(), []int{1, 2, 3, 4, 6}, Options{Duration: 20 * time.Minute, Seed: 3})
	require.NoError(t, err)
	require.Len(t, preds, 5)
	for i, p := range preds {
		require.Equal(t, []int{1, 2, 3, 4, 6}[i], p.Replicas)
		require.Greater(t, p.Finished, 0)
		if i > 0 {
			require.LessOrEqual(t, p.QueueP99, preds[i-1].QueueP99, "replicas %d", p.Replicas)
			require.Less(t, p.Utilisation, preds[i-1].Utilisation+1e-9)
		}
	}
	require.True(t, preds[0].Overloaded, "one replica of ~4.5 req/s under 10 req/s")
	require.InDelta(t, 1, preds[0].Utilisation, 0.02)
	require.False(t, preds[4].Overloaded)
	require.Less(t, preds[4].QueueP99, 1.0)
}

func TestPredictIsRepeatable(t *testing.T) {
	o := Options{Duration: 5 * time.Minute, Seed: 5}
	a, err := Predict(smallModel(), []int{3}, o)
	require.NoError(t, err)
	b, err := Predict(smallModel(), []int{3}, o)
	require.NoError(t, err)
	require.Equal(t, a, b)
}

func TestPredictScaleAddsLoad(t *testing.T) {
	o := Options{Duration: 20 * time.Minute, Seed: 5}
	base, err := Predict(smallModel(), []int{3}, o)
	require.NoError(t, err)
	o.Scale = 1.3
	more, err := Predict(smallModel(), []int{3}, o)
	require.NoError(t, err)
	require.InEpsilon(t, 1.3, float64(more[0].Finished)/float64(base[0].Finished), 0.05)
}

func TestTrace(t *testing.T) {
	tests := []struct {
		name        string
		arrivals    []float64
		o           Options
		wantFactors []float64
		wantRate    float64
	}{
		{name: "factors on the mean", arrivals: []float64{2, 6}, wantFactors: []float64{0.5, 1.5}, wantRate: 4},
		{name: "the last hour kept", arrivals: []float64{100, 1, 3}, o: Options{Duration: 2 * time.Minute}, wantFactors: []float64{0.5, 1.5}, wantRate: 2},
		{name: "NaN steps count as none", arrivals: []float64{math.NaN(), 4}, wantFactors: []float64{0, 2}, wantRate: 2},
		{name: "scaled", arrivals: []float64{1, 1}, o: Options{Scale: 1.2}, wantFactors: []float64{1, 1}, wantRate: 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, r := trace(tt.arrivals, time.Minute, tt.o)
			require.InDeltaSlice(t, tt.wantFactors, f, 1e-9)
			require.InDelta(t, tt.wantRate, r, 1e-9)
		})
	}
}

func TestNeeded(t *testing.T) {
	q := func(p Prediction) float64 { return p.QueueP99 }
	preds := []Prediction{{Replicas: 1, QueueP99: 0.5, Overloaded: true}, {Replicas: 2, QueueP99: 3}, {Replicas: 3, QueueP99: 0.9},
		{Replicas: 4, QueueP99: math.NaN()}, {Replicas: 5, QueueP99: 0.1}}
	tests := []struct {
		threshold float64
		want      int
	}{{1, 3}, {0.2, 5}, {0.05, 0}, {5, 2}}
	for _, tt := range tests {
		require.Equal(t, tt.want, Needed(preds, tt.threshold, q), "threshold %v", tt.threshold)
	}
}

// countInto counts vals into per-bucket counts of bounds (+Inf last), by
// Prometheus's le rule.
func countInto(vals, bounds []float64) []uint64 {
	counts := make([]uint64, len(bounds)+1)
	for _, v := range vals {
		i, _ := slices.BinarySearch(bounds, v) // v ≤ bounds[i]
		counts[i]++
	}
	return counts
}

func TestBucketQuantile(t *testing.T) {
	bounds := []float64{1, 2, 5}
	tests := []struct {
		name string
		vals []float64
		q    float64
		want float64
	}{
		{name: "empty", q: 0.99, want: math.NaN()},
		{name: "all in the first bucket: from 0", vals: []float64{0.1, 0.2, 0.3, 0.4}, q: 0.5, want: 0.5},
		{name: "interpolated in its bucket", vals: []float64{0.5, 1.5, 1.5, 3, 3, 3, 4, 4, 4, 4}, q: 0.5, want: 2 + 3*2/7.0},
		{name: "a bound is in the bucket it closes", vals: []float64{1, 1, 2, 2}, q: 0.5, want: 1},
		{name: "rank in +Inf: the last finite bound", vals: []float64{0.5, 9, 9, 9}, q: 0.99, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bucketQuantile(countInto(tt.vals, bounds), tt.q, bounds)
			if math.IsNaN(tt.want) {
				require.True(t, math.IsNaN(got))
				return
			}
			require.InDelta(t, tt.want, got, 1e-9)
		})
	}
}

func TestPredictRejectsABrokenModel(t *testing.T) {
	m := smallModel()
	m.Prompt = sim.Dist{Kind: sim.Empirical}
	_, err := Predict(m, []int{1}, Options{Duration: time.Minute})
	require.ErrorIs(t, err, ErrBadModel)
	_, err = Predict(smallModel(), []int{0}, Options{Duration: time.Minute})
	require.ErrorIs(t, err, ErrBadModel)
	m = smallModel()
	m.Arrivals = nil
	_, err = Predict(m, []int{1}, Options{Duration: time.Minute})
	require.ErrorIs(t, err, ErrBadModel)
	m = smallModel()
	m.Arrivals = []float64{0, 0}
	_, err = Predict(m, []int{1}, Options{Duration: time.Minute})
	require.ErrorIs(t, err, sim.ErrInvalidConfig, "no arrivals at all: the simulator refuses the trace")
}
