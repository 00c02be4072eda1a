package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCustomHistogramBuckets(t *testing.T) {
	custom := []float64{0.05, 0.5, 5}
	f := newTestFleet(t, func(c *Config) {
		c.HistogramBuckets = map[string][]float64{"time_to_first_token_seconds": custom}
	}, InstanceConfig{Model: "m", Engines: 2}, InstanceConfig{Model: "old", Generation: V0})
	require.NoError(t, f.Advance(2*time.Minute))
	for inst := range 2 {
		s := scrape(t, f, inst)
		ttft := s.families["vllm:time_to_first_token_seconds"]
		require.NotNil(t, ttft)
		for _, sv := range ttft.series {
			require.Equal(t, custom, sv.bounds, "instance %d replaces the bucket list", inst)
			require.Positive(t, sv.count, "observations still land in the custom buckets")
			require.Equal(t, sv.count, sv.inf)
		}
		e2e := s.families["vllm:e2e_request_latency_seconds"]
		require.Equal(t, requestLatencyBuckets, e2e.series[0].bounds, "other families keep vLLM's defaults")
	}
}

func TestCustomHistogramBucketsRejected(t *testing.T) {
	tests := []struct {
		name    string
		buckets map[string][]float64
	}{
		{"prefixed name", map[string][]float64{"vllm:time_to_first_token_seconds": {1}}},
		{"not a histogram", map[string][]float64{"num_requests_running": {1}}},
		{"unknown", map[string][]float64{"ttft": {1}}},
		{"empty", map[string][]float64{"time_to_first_token_seconds": nil}},
		{"descending", map[string][]float64{"time_to_first_token_seconds": {1, 0.5}}},
		{"duplicate", map[string][]float64{"time_to_first_token_seconds": {1, 1}}},
		{"infinite", map[string][]float64{"time_to_first_token_seconds": {1, math.Inf(1)}}},
		{"NaN", map[string][]float64{"time_to_first_token_seconds": {math.NaN()}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Instances = []InstanceConfig{{Model: "m"}}
			cfg.HistogramBuckets = tt.buckets
			_, err := NewFleet(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestParseConfigHistogramBuckets(t *testing.T) {
	c, err := ParseConfig([]byte(`{"histogram_buckets": {"inter_token_latency_seconds": [0.01, 0.1]}}`), DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, map[string][]float64{"inter_token_latency_seconds": {0.01, 0.1}}, c.HistogramBuckets)
}
