package twin

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

func TestLengths(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name        string
		in          []Bucket
		wantBounds  []float64
		wantWeights []float64
		wantErr     bool
	}{
		{name: "cumulative to shares, sorted", in: []Bucket{{Le: 10, Count: 4}, {Le: 1, Count: 1}, {Le: inf, Count: 4}, {Le: 5, Count: 3}},
			wantBounds: []float64{1, 5, 10}, wantWeights: []float64{1, 2, 1}},
		{name: "+Inf holds some: one more bucket as wide again", in: []Bucket{{Le: 100, Count: 8}, {Le: inf, Count: 10}},
			wantBounds: []float64{100, 200}, wantWeights: []float64{8, 2}},
		{name: "a count below the one before (increase's extrapolation) adds nothing",
			in: []Bucket{{Le: 10, Count: 5}, {Le: 20, Count: 4.9}, {Le: 50, Count: 7}}, wantBounds: []float64{10, 20, 50}, wantWeights: []float64{5, 0, 2}},
		{name: "bounds under one token dropped", in: []Bucket{{Le: 0.5, Count: 0}, {Le: 2, Count: 3}}, wantBounds: []float64{2}, wantWeights: []float64{3}},
		{name: "empty", in: nil, wantErr: true},
		{name: "no requests", in: []Bucket{{Le: 10, Count: 0}, {Le: inf, Count: 0}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Lengths(tt.in, 0)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, sim.Empirical, d.Kind)
			require.Equal(t, tt.wantBounds, d.Bounds)
			require.InDeltaSlice(t, tt.wantWeights, d.Weights, 1e-9)
		})
	}
}

func TestLengthsKeepTheMean(t *testing.T) {
	// A log-normal of mean 250 (sigma 0.9) as vLLM's 1-2-5 buckets hold it.
	bounds := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 8192}
	r := rand.New(rand.NewPCG(1, 2))
	src := sim.Dist{Kind: sim.LogNormal, A: 250, B: 0.9}
	counts := make([]float64, len(bounds))
	for i := 0; i < 100000; i++ {
		v := float64(src.Sample(r))
		for j, b := range bounds {
			if v <= b {
				counts[j]++
			}
		}
	}
	var bs []Bucket
	for j, b := range bounds {
		bs = append(bs, Bucket{Le: b, Count: counts[j]})
	}
	for _, tt := range []struct {
		name     string
		mean     float64
		tol      float64
		sigmaTol float64
	}{{"the shape from the quartiles", 0, 0.04, 0.15}, {"the shape from the exact mean", 250, 0.02, 0.05}} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Lengths(bs, tt.mean)
			require.NoError(t, err)
			require.NoError(t, d.Validate())
			sum := 0.0
			for i := 0; i < 100000; i++ {
				sum += float64(d.Sample(r))
			}
			require.InEpsilon(t, 250, sum/100000, tt.tol)
			require.InEpsilon(t, math.Log(250)-0.9*0.9/2, d.A, 0.05, "log-space mean")
			require.InEpsilon(t, 0.9, d.B, tt.sigmaTol, "sigma")
		})
	}
}
