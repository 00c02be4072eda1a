package vllm

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGPUSecondsAndEnergy(t *testing.T) {
	nan := math.NaN()
	g := CapacityGroup{Servers: []CapacityServer{
		{Name: "a", Signals: map[string][]float64{CapWaiting: {0, 1, 2, 3}}},
		{Name: "b", Signals: map[string][]float64{CapWaiting: {nan, nan, 0, 0}}},
		{Name: "gone", Signals: map[string][]float64{CapWaiting: {nan, nan, nan, nan}}},
	}}
	step := 15 * time.Second
	gpus := map[string]float64{"a": 2, "b": 4}
	require.InDelta(t, 4*15*2+2*15*4, GPUSeconds(g, step, func(s string) float64 { return gpus[s] }), 1e-9)
	tests := []struct {
		name  string
		power map[string]float64
		want  float64
		ok    bool
	}{
		{"every answering server read", map[string]float64{"a": 500, "b": 1000}, 500*60 + 1000*30, true},
		{"a server not answering needs no reading", map[string]float64{"a": 500, "b": 1000}, 60000, true},
		{"an answering server without a reading: no figure", map[string]float64{"a": 500}, 0, false},
		{"a NaN reading: no figure", map[string]float64{"a": 500, "b": nan}, 0, false},
		{"no power at all", map[string]float64{"a": 0, "b": 0}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, ok := EnergyJoules(g, step, tt.power)
			require.Equal(t, tt.ok, ok)
			require.InDelta(t, tt.want, j, 1e-9)
		})
	}
}
