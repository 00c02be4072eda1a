package vllm

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func dcgmSample(name string, v float64, ls model.LabelSet) *model.Sample {
	m := model.Metric{model.MetricNameLabel: model.LabelValue(name)}
	for k, val := range ls {
		m[k] = val
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v)}
}

// Both layouts in one answer: per exporter, exported_* (honorLabels false)
// or the plain labels (true); Hostname or hostname; an unallocated GPU of
// an exported-layout exporter keeps no workload (its pod is the exporter).
func TestDCGMGPUs(t *testing.T) {
	a := model.LabelSet{"job": "dcgm", "instance": "10.0.0.1:9400", "namespace": "gpu-operator", "pod": "dcgm-x", "Hostname": "node-a"}
	gpu := func(base model.LabelSet, extra model.LabelSet) model.LabelSet {
		out := base.Clone()
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	a0 := gpu(a, model.LabelSet{"gpu": "0", "UUID": "GPU-a0", "exported_namespace": "llm", "exported_pod": "vllm-0", "modelName": "H100"})
	a1 := gpu(a, model.LabelSet{"gpu": "1", "UUID": "GPU-a1"})
	b := model.LabelSet{"job": "dcgm", "instance": "10.0.0.2:9400", "hostname": "node-b"}
	b10 := gpu(b, model.LabelSet{"gpu": "10", "UUID": "GPU-b10", "namespace": "llm", "pod": "vllm-1"})
	b2 := gpu(b, model.LabelSet{"gpu": "2", "UUID": "GPU-b2", "namespace": "llm", "pod": "vllm-1"})
	vec := model.Vector{
		dcgmSample("DCGM_FI_DEV_FB_USED", 100, a0), dcgmSample("DCGM_FI_DEV_FB_FREE", 20, a0), dcgmSample("DCGM_FI_DEV_FB_RESERVED", 4, a0),
		dcgmSample("DCGM_FI_DEV_SM_CLOCK", 1980, a0), dcgmSample("DCGM_FI_DEV_GPU_UTIL", 0, a1),
		dcgmSample("DCGM_FI_DEV_GPU_UTIL", 50, b10), dcgmSample("DCGM_FI_DEV_FB_USED", 7, b2),
		dcgmSample("DCGM_FI_DEV_ENC_UTIL", 1, b2), // not a reading the query takes
	}
	got := DCGMGPUs(vec)
	require.Len(t, got, 4)
	require.Equal(t, []string{"node-a/0", "node-a/1", "node-b/2", "node-b/10"},
		[]string{got[0].Node + "/" + got[0].Index, got[1].Node + "/" + got[1].Index, got[2].Node + "/" + got[2].Index, got[3].Node + "/" + got[3].Index})
	require.Equal(t, "llm", got[0].Namespace)
	require.Equal(t, "vllm-0", got[0].Pod)
	require.Equal(t, "H100", got[0].Name)
	require.Equal(t, 124.0*mib, got[0].Values[DCGMFBTotal])
	require.Equal(t, 1980e6, got[0].Values[DCGMSMClock])
	require.Equal(t, "", got[1].Pod, "the exporter's own pod is not a workload")
	_, hasTotal := got[2].Values[DCGMFBTotal]
	require.False(t, hasTotal, "no total without free and reserved")
	require.Equal(t, "vllm-1", got[3].Pod)
	require.Len(t, got[3].Values, 1)

	pods := profileBuilder(models.ProfileLLMD)
	require.Equal(t, "llm/vllm-0", pods.Workload(got[0]))
	require.Equal(t, "", pods.Workload(got[1]))
	require.Equal(t, "", profileBuilder(models.ProfileRayServe).Workload(got[0]), "a replica is not a pod")
	require.Equal(t, "", profileBuilder(models.ProfilePrometheus).Workload(got[0]))
}

// A scope on the workload's labels also reads exported_*; other scopes
// stay as they are; every expression parses.
func TestDCGMScope(t *testing.T) {
	b := Builder{Scope: mustMatchers(t, `cluster="eu", namespace=~"llm|batch"`)}
	sel := b.DCGMSelector()
	sels := allSelectors(t, sel)
	require.Len(t, sels, 2)
	require.Contains(t, sels[1].String(), `exported_namespace=~"llm|batch"`)
	require.Contains(t, sels[1].String(), `cluster="eu"`)
	require.Len(t, allSelectors(t, Builder{Scope: mustMatchers(t, `cluster="eu"`)}.DCGMSelector()), 1)
	require.NotEmpty(t, allSelectors(t, b.DCGMSeries()))
	require.NotEmpty(t, allSelectors(t, profileBuilder(models.ProfileKServe).ServersByModel()))
}
