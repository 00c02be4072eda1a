//go:build !mutation

package query_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// imitation turns the V1 fixture into a fleet like some vLLM builds and
// imitations: no preemption counter, and the older names of inter-token
// latency and KV-cache usage.
func imitation(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../health/testdata/v1.prom")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "num_preemptions") {
			continue
		}
		line = strings.ReplaceAll(line, "inter_token_latency_seconds", "time_per_output_token_seconds")
		line = strings.ReplaceAll(line, "kv_cache_usage_perc", "gpu_cache_usage_perc")
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}

// TestMissingMetricNotices: a query type whose signal the fleet does not
// export answers with a notice naming the metric and the vLLM versions that
// export it, and one that reads a fallback name says so.
func TestMissingMetricNotices(t *testing.T) {
	t.Parallel()
	srv := promtest.Start(t, promtest.Options{Targets: []string{promtest.ServeExposition(t, imitation(t))}})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 3`, 1, 30*time.Second)
	e := executor(t, srv.URL)
	to := time.Now()
	from := to.Add(-time.Minute)
	preemptionVersions := regexp.MustCompile(`vllm:num_preemptions_total.*0\.4\.3.*0\.8\.0`)
	tests := []struct {
		name string
		js   string
		want []*regexp.Regexp
	}{
		{name: "preemption annotations", js: `{"queryType":"preemptions"}`, want: []*regexp.Regexp{preemptionVersions,
			regexp.MustCompile(`--disable-log-stats`)}},
		{name: "preemption rate", js: `{"queryType":"preemptions","asSeries":true}`, want: []*regexp.Regexp{preemptionVersions}},
		{name: "topk by preemption rate", js: `{"queryType":"topk","rankBy":"preemption_rate"}`, want: []*regexp.Regexp{preemptionVersions}},
		{name: "inter-token latency from the older name", js: `{"queryType":"waitTime","family":"itl"}`, want: []*regexp.Regexp{
			regexp.MustCompile(`Read vllm:time_per_output_token_seconds.*vllm:inter_token_latency_seconds.*0\.11`)}},
		{name: "KV usage from the older name", js: `{"queryType":"topk","rankBy":"kv_usage"}`, want: []*regexp.Regexp{
			regexp.MustCompile(`Read vllm:gpu_cache_usage_perc.*vllm:kv_cache_usage_perc.*0\.9\.2`)}},
		{name: "a selection with no engine", js: `{"queryType":"queue","models":["no-such-model"]}`, want: []*regexp.Regexp{
			regexp.MustCompile(`No vLLM engine matches the selection`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, e, dq("A", tt.js, from, to)).Responses["A"]
			require.NoError(t, r.Error)
			require.NotEmpty(t, r.Frames)
			texts := noticeTexts(r.Frames)
			for _, re := range tt.want {
				require.Regexp(t, re, texts)
			}
		})
	}
	t.Run("a complete fleet gets no such notice", func(t *testing.T) {
		r := run(t, e, dq("A", `{"queryType":"queue"}`, from, to)).Responses["A"]
		require.NoError(t, r.Error)
		require.NotContains(t, noticeTexts(r.Frames), "exported by")
	})
}
