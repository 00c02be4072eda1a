package vllm

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// namesFromExposition collects metric names from an exposition fixture, the
// way Prometheus would store them after a scrape.
func namesFromExposition(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	set := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			set[line[:i]] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	return out
}

func TestDetect(t *testing.T) {
	v1 := namesFromExposition(t, "../health/testdata/v1.prom")
	v0 := namesFromExposition(t, "../health/testdata/v0.prom")
	tests := []struct {
		name   string
		names  []string
		prefix string
		want   Generation
		found  bool
	}{
		{"V1 exposition", v1, "vllm:", GenV1, true},
		{"V0 exposition", v0, "vllm:", GenV0, true},
		{"mixed fleet", append(append([]string{}, v1...), v0...), "vllm:", GenMixed, true},
		{"only shared names", []string{"vllm:num_requests_running", "vllm:gpu_cache_usage_perc"}, "vllm:", GenUnknown, true},
		{"V1 0.10 keeps the old KV name beside the new", []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds_bucket"}, "vllm:", GenV1, true},
		{"nothing", []string{"up", "node_load1"}, "vllm:", GenUnknown, false},
		{"other prefix ignored", v1, "ray_vllm:", GenUnknown, false},
		{"ray prefix", []string{"ray_vllm:num_requests_swapped", "ray_vllm:num_requests_running"}, "ray_vllm:", GenV0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Detect(tt.names, tt.prefix)
			require.Equal(t, tt.want, d.Generation)
			require.Equal(t, tt.found, d.Found())
		})
	}
}

func TestDetectFoldsHistogramSeries(t *testing.T) {
	d := Detect([]string{"vllm:request_queue_time_seconds_bucket", "vllm:request_queue_time_seconds_sum", "vllm:request_queue_time_seconds_count", "vllm:num_preemptions_total"}, "vllm:")
	require.Equal(t, []string{"num_preemptions_total", "request_queue_time_seconds"}, d.SortedNames())
	require.True(t, d.HasSignal(QueueTime))
	require.True(t, d.HasSignal(Preemptions))
	require.False(t, d.HasSignal(KVUsage))
}

func TestNameMatcherRegexQuotesPrefix(t *testing.T) {
	require.Equal(t, `vllm:.+`, NameMatcherRegex("vllm:"))
	require.Equal(t, `a\.b:.+`, NameMatcherRegex("a.b:"))
}
