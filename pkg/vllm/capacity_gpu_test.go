package vllm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
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

// dcgm-exporter's power over the range: a workload scope reads both label
// layouts (a selector each, each under its own range function), and the
// answer files each GPU's mean power under the power key with its pod.
func TestCapacityDCGMPower(t *testing.T) {
	scoped := Builder{Scope: mustMatchers(t, `namespace="inference"`)}.CapacityDCGMPower(30 * time.Minute)
	sels := allSelectors(t, scoped)
	require.Len(t, sels, 2)
	require.Contains(t, sels[1].String(), `exported_namespace="inference"`)
	require.Equal(t, 2, strings.Count(scoped, "avg_over_time("), scoped)
	require.Equal(t, "avg_over_time(DCGM_FI_DEV_POWER_USAGE[30m])", Builder{}.CapacityDCGMPower(30*time.Minute))

	vec := model.Vector{
		{Metric: model.Metric{"gpu": "0", "UUID": "GPU-a", "hostname": "n", "namespace": "gpu-operator", "pod": "dcgm-x",
			"exported_namespace": "inference", "exported_pod": "vllm-0", "job": "gpu-metrics", "instance": "e:9400"}, Value: 300},
		{Metric: model.Metric{"gpu": "1", "UUID": "GPU-b", "hostname": "n", "namespace": "gpu-operator", "pod": "dcgm-x",
			"job": "gpu-metrics", "instance": "e:9400"}, Value: 60}, // unallocated: the exporter's own pod, no workload
	}
	gpus := DCGMPowerGPUs(vec)
	require.Len(t, gpus, 2)
	require.Equal(t, 300.0, gpus[0].Values[DCGMPower])
	require.Equal(t, "inference/vllm-0", profileBuilder(models.ProfileLLMD).Workload(gpus[0]))
	require.Equal(t, "", profileBuilder(models.ProfileLLMD).Workload(gpus[1]), "an unallocated GPU serves no server")
}
