package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDetectKeepsSuffixOfNonHistograms: only histogram families lose their
// _bucket, _sum and _count suffixes; any other name ending in one of them
// is a name of its own.
func TestDetectKeepsSuffixOfNonHistograms(t *testing.T) {
	d := Detect([]string{"vllm:made_up_count", "vllm:other_sum", "vllm:e2e_request_latency_seconds_count"}, "vllm:")
	require.Equal(t, []string{"e2e_request_latency_seconds", "made_up_count", "other_sum"}, d.SortedNames())
}

// TestHasSignalByEitherName: a signal is present when its V1 name alone or
// its V0 name alone is.
func TestHasSignalByEitherName(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		key   SignalKey
		want  bool
	}{
		{name: "V1 name only", names: []string{"vllm:kv_cache_usage_perc"}, key: KVUsage, want: true},
		{name: "V0 name only", names: []string{"vllm:gpu_cache_usage_perc"}, key: KVUsage, want: true},
		{name: "V0-only signal", names: []string{"vllm:cpu_cache_usage_perc"}, key: CPUKVUsage, want: true},
		{name: "neither", names: []string{"vllm:num_requests_running"}, key: KVUsage, want: false},
		{name: "unknown signal", names: []string{"vllm:kv_cache_usage_perc"}, key: "nope", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Detect(tt.names, "vllm:").HasSignal(tt.key))
		})
	}
}

// TestGPUSeriesAllInstances: without instances the agent gauges are not
// filtered at all (vllm_instance=~"" would drop every mapped GPU).
func TestGPUSeriesAllInstances(t *testing.T) {
	for _, vs := range allSelectors(t, Builder{Prefix: "vllm:", InstanceLabel: "instance"}.GPUSeries(nil)) {
		for _, m := range vs.LabelMatchers {
			require.NotEqual(t, "vllm_instance", m.Name, "%s", vs)
		}
	}
}
