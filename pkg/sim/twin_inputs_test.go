package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The trace profile and the empirical distribution are what a capacity
// twin builds from a fleet's history; they have no text form.

func TestTraceProfile(t *testing.T) {
	p := Profile{Kind: Trace, Period: time.Minute, Factors: []float64{0.5, 2, 1}}
	require.NoError(t, p.validate())
	for _, tt := range []struct {
		at   time.Duration
		want float64
	}{{0, 0.5}, {59 * time.Second, 0.5}, {time.Minute, 2}, {150 * time.Second, 1}, {3 * time.Minute, 0.5}} {
		require.Equal(t, tt.want, p.factor(tt.at), "at %v", tt.at)
	}
	require.Equal(t, 2.0, p.peak())
	require.Equal(t, "trace:period=1m,factors=3", p.String())
	for _, bad := range []Profile{{Kind: Trace, Period: time.Minute}, {Kind: Trace, Factors: []float64{1}},
		{Kind: Trace, Period: time.Minute, Factors: []float64{-1, 2}}, {Kind: Trace, Period: time.Minute, Factors: []float64{0, 0}}} {
		require.ErrorIs(t, bad.validate(), ErrInvalidConfig, "%+v", bad)
	}
	_, err := ParseProfile("trace:period=1m")
	require.ErrorIs(t, err, ErrInvalidConfig, "a trace has no text form")
}

func TestTraceProfileDrivesArrivals(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Skew, cfg.Rate = 0, 5
	cfg.Profile = Profile{Kind: Trace, Period: 10 * time.Minute, Factors: []float64{0.2, 1.8}}
	cfg.Instances = []InstanceConfig{{Model: "m"}}
	f, err := NewFleet(cfg)
	require.NoError(t, err)
	require.NoError(t, f.Advance(10*time.Minute))
	low := f.Snapshot().Engines[0].Arrivals
	require.NoError(t, f.Advance(10*time.Minute))
	high := f.Snapshot().Engines[0].Arrivals - low
	require.InEpsilon(t, 600, float64(low), 0.15, "0.2 × 5/s × 600 s")
	require.InEpsilon(t, 5400, float64(high), 0.05, "1.8 × 5/s × 600 s")
}

func TestEmpiricalDist(t *testing.T) {
	d := Dist{Kind: Empirical, Bounds: []float64{1, 10, 100}, Weights: []float64{1, 0, 3}}
	require.NoError(t, d.validate("prompt"))
	r := rand.New(rand.NewPCG(1, 1))
	counts := map[string]int{}
	for i := 0; i < 40000; i++ {
		v := d.sample(r)
		switch {
		case v == 1:
			counts["1"]++
		case v > 10 && v <= 100:
			counts["(10,100]"]++
		default:
			t.Fatalf("sample %d outside the weighted buckets", v)
		}
	}
	require.InEpsilon(t, 0.25, float64(counts["1"])/40000, 0.05)
	for _, bad := range []Dist{{Kind: Empirical}, {Kind: Empirical, Bounds: []float64{1, 2}, Weights: []float64{1}},
		{Kind: Empirical, Bounds: []float64{5, 2}, Weights: []float64{1, 1}}, {Kind: Empirical, Bounds: []float64{0.5}, Weights: []float64{1}},
		{Kind: Empirical, Bounds: []float64{1, 2}, Weights: []float64{0, 0}}, {Kind: Empirical, Bounds: []float64{1}, Weights: []float64{-1}}} {
		require.ErrorIs(t, bad.validate("prompt"), ErrInvalidConfig, "%+v", bad)
	}
	_, err := ParseDist("empirical:1,2")
	require.ErrorIs(t, err, ErrInvalidConfig, "no text form")
}
