package query_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWaitTimeOnRecordedQuantiles: waitTime by instance reads each
// server's recorded quantiles and mean, by instance and engine each
// engine's, where they answer exactly (the quantile, family and window
// recorded, no engine filter on a per-server series, no group holding two
// recorded series); otherwise the recorded bucket, _sum and _count rates,
// with the same notice.
func TestWaitTimeOnRecordedQuantiles(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	byInstance := `{"queryType":"waitTime","grouping":"instance"}`
	buckets := "histogram_quantile(0.5, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m))"
	tests := []struct {
		name, settings, query string
		step                  time.Duration
		drop                  []string
		shared                bool
		want, notWant         []string
	}{
		{"by instance, the default quantiles", `{}`, byInstance, 30 * time.Second, nil, false,
			[]string{`label_replace(max by (instance) (engine:vllm_request_queue_time_seconds:server_p50_rate1m), "vllm_signal", "p50", "", "")`,
				"max by (instance) (engine:vllm_request_queue_time_seconds:server_p90_rate1m)",
				"max by (instance) (engine:vllm_request_queue_time_seconds:server_p99_rate1m)",
				`label_replace(max by (instance) (engine:vllm_request_queue_time_seconds:server_mean_rate1m), "vllm_signal", "mean", "", "")`},
			[]string{"_bucket", "_sum", "_count", "rate(vllm:"}},
		{"by instance and engine: p50 from wait_quantiles, p99 from engine_p99", `{}`,
			`{"queryType":"waitTime","family":"ttft","quantiles":[0.5,0.99],"grouping":"instance_engine","instances":["a:8000"]}`, 30 * time.Second, nil, false,
			[]string{`max by (instance, engine) (engine:vllm_time_to_first_token_seconds:p50_rate1m{instance="a:8000"})`,
				`max by (instance, engine) (engine:vllm_time_to_first_token_seconds:p99_rate1m{instance="a:8000"})`,
				`max by (instance, engine) (engine:vllm_time_to_first_token_seconds:mean_rate1m{instance="a:8000"})`},
			[]string{"_bucket", "_sum", ":server_"}},
		{"a model filter: the per-server series keep model_name", `{}`, `{"queryType":"waitTime","grouping":"instance","models":["m"]}`, 30 * time.Second, nil, false,
			[]string{`max by (instance) (engine:vllm_request_queue_time_seconds:server_p50_rate1m{model_name="m"})`}, []string{"_bucket"}},
		{"a quantile no rule records reads the bucket rates, the others their series", `{}`,
			`{"queryType":"waitTime","grouping":"instance","quantiles":[0.5,0.95]}`, 30 * time.Second, nil, false,
			[]string{"max by (instance) (engine:vllm_request_queue_time_seconds:server_p50_rate1m)",
				"histogram_quantile(0.95, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m))"},
			[]string{buckets}},
		{"an engine filter: the servers' series sum the engines away", `{}`, `{"queryType":"waitTime","grouping":"instance","engines":["0"]}`,
			30 * time.Second, nil, false, []string{`(engine:vllm_request_queue_time_seconds_bucket:rate1m{engine="0"})`}, []string{":server_"}},
		{"an engine matcher likewise", `{}`, `{"queryType":"waitTime","grouping":"instance","matchers":"engine=\"0\""}`,
			30 * time.Second, nil, false, []string{`(engine:vllm_request_queue_time_seconds_bucket:rate1m{engine="0"})`}, []string{":server_"}},
		{"two recorded series in one group within the range", `{}`, byInstance, 30 * time.Second, nil, true,
			[]string{buckets}, []string{":server_"}},
		{"the quantile group missing", `{}`, byInstance, 30 * time.Second, []string{":server_", ":p50_", ":p90_", ":mean_"}, false,
			[]string{buckets}, []string{":server_"}},
		{"a family no quantile rule records", `{}`, `{"queryType":"waitTime","family":"e2e","grouping":"instance"}`, 30 * time.Second, nil, false,
			[]string{"histogram_quantile(0.5, sum by (le, instance) (engine:vllm_e2e_request_latency_seconds_bucket:rate1m))"}, []string{":server_"}},
		{"by model: no quantile rule", `{}`, `{"queryType":"waitTime","grouping":"model"}`, 30 * time.Second, nil, false,
			[]string{"histogram_quantile(0.5, sum by (le, model_name) (engine:vllm_request_queue_time_seconds_bucket:rate1m))"}, []string{":server_", ":p50_"}},
		{"exact: a 75s window stays raw", `{}`, byInstance, time.Minute, nil, false,
			[]string{"rate(vllm:request_queue_time_seconds_bucket[75s])"}, []string{"engine:"}},
		{"nearest: a 75s window reads the 1m quantiles", `{"recordingRules":"nearest"}`, byInstance, time.Minute, nil, false,
			[]string{"max by (instance) (engine:vllm_request_queue_time_seconds:server_p99_rate1m)"}, []string{"_bucket", "rate(vllm:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-2 * time.Hour), drop: tt.drop, shared: tt.shared}
			r := runOnRuleProm(t, fp, tt.settings, tt.query, tt.step, now)
			require.NoError(t, r.Error)
			asked := fp.exprs()
			for _, w := range tt.want {
				require.Contains(t, asked, w)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, asked, w)
			}
			onRules := strings.Contains(asked, "engine:")
			require.Equal(t, onRules, strings.Contains(noticeTexts(r.Frames), "Answered from recording rules (engine:…, every 30s)"))
			require.Equal(t, onRules && strings.Contains(tt.settings, "nearest"), strings.Contains(noticeTexts(r.Frames), "close rather than exact"))
			require.NotContains(t, noticeTexts(r.Frames), "read raw series")
		})
	}
}
