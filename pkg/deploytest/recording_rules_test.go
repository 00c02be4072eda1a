package deploytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecordingRuleTestsCanFail breaks the recording rules one way at a time
// in a temporary copy and requires their unit tests to fail where the break
// is: the per-le rates, the V0 engine without engine label, the inter-token
// name join, a rescheduled pod's single series, the stall inputs, the
// stall state (reported before, up, sleep, pods, its zero rows), the
// per-engine p99s and the per-engine and per-server wait quantiles and
// means are each guarded.
func TestRecordingRuleTestsCanFail(t *testing.T) {
	bin := promtool(t)
	original, err := os.ReadFile(repoPath(t, recordingRulesFile))
	require.NoError(t, err)
	unitTests, err := os.ReadFile(repoPath(t, recordingRulesTestFile))
	require.NoError(t, err)
	const (
		podTTFT   = `          sum by (le, cluster, namespace, pod, model_name, engine) (rate(vllm:time_to_first_token_seconds_bucket{pod!=""}[1m]))`
		plainQ    = `          sum by (le, cluster, namespace, instance, model_name, engine) (rate(vllm:request_queue_time_seconds_bucket{pod=""}[1m]))`
		plainKV   = `vllm:kv_cache_usage_perc{pod=""} or vllm:gpu_cache_usage_perc{pod=""}`
		podKV     = `max by (cluster, namespace, pod, model_name, engine) (vllm:kv_cache_usage_perc{pod!=""}`
		plainITLC = "\n              or\n                rate(vllm:time_per_output_token_seconds_count{pod=\"\"}[5m])"
	)
	tests := []struct {
		name, old, new, want string
	}{
		{"queue buckets summed over le", plainQ, strings.Replace(plainQ, "le, ", "", 1), "engine:vllm_request_queue_time_seconds_bucket:rate1m"},
		{"queue buckets summed over engines", plainQ, strings.Replace(plainQ, ", engine", "", 1), "engine:vllm_request_queue_time_seconds_bucket:rate1m"},
		{"Kubernetes buckets per pod IP: a rescheduled pod gets a second series", podTTFT, strings.Replace(podTTFT, "pod, ", "pod, instance, ", 1), "time: 11m30s"},
		{"Kubernetes buckets per pod name only: namespaces mix", podTTFT, strings.Replace(podTTFT, "namespace, ", "", 1), "engine:vllm_time_to_first_token_seconds_bucket:rate1m"},
		{"inter-token buckets joined with plain or: old and new buckets mix",
			"or ignoring (le)\n                rate(vllm:time_per_output_token_seconds_bucket{pod=\"\"}[1m])",
			"or\n                rate(vllm:time_per_output_token_seconds_bucket{pod=\"\"}[1m])", "engine:vllm_inter_token_latency_seconds_bucket:rate1m"},
		{"inter-token count without the V0 name", plainITLC, "", "engine:vllm_inter_token_latency_seconds_count:rate5m"},
		{"KV usage of V1 only: the V0 server is missed", plainKV, `vllm:kv_cache_usage_perc{pod=""}`, "engine:vllm_kv_cache_usage_perc:max"},
		{"KV usage prefers the old name", plainKV, `vllm:gpu_cache_usage_perc{pod=""} or vllm:kv_cache_usage_perc{pod=""}`, "engine:vllm_kv_cache_usage_perc:max"},
		{"Kubernetes KV usage per pod IP", podKV, strings.Replace(podKV, "pod, ", "pod, instance, ", 1), "engine:vllm_kv_cache_usage_perc:max"},
		{"stall minimum summed over engines",
			"\n          sum by (cluster, namespace, instance, model_name, engine) (min_over_time(vllm:num_requests_running{pod=\"\"}[3m]))\n",
			"\n          sum by (cluster, namespace, instance, model_name) (min_over_time(vllm:num_requests_running{pod=\"\"}[3m]))\n",
			"engine:vllm_num_requests_running:min_over_time3m"},
		{"stall progress as a rate, not an increase",
			"(increase(vllm:generation_tokens_total{pod=\"\"}[3m]))\n", "(rate(vllm:generation_tokens_total{pod=\"\"}[3m]))\n",
			"engine:vllm_generation_tokens:increase3m"},
		{"per-engine p99 over a pod's namespace",
			`histogram_quantile(0.99, sum by (le, cluster, namespace, pod, model_name, engine) (rate(vllm:time_to_first_token_seconds_bucket{pod!=""}[1m])))`,
			`histogram_quantile(0.99, sum by (le, cluster, namespace, model_name, engine) (rate(vllm:time_to_first_token_seconds_bucket{pod!=""}[1m])))`,
			"engine:vllm_time_to_first_token_seconds:p99_rate1m"},
		{"stall state without \"reported before the window\"",
			` and on (cluster, namespace, instance, model_name, engine) group by (cluster, namespace, instance, model_name, engine) (count_over_time(vllm:num_requests_running{pod=""}[3m] offset 3m))`,
			"", "engine:vllm_stalled:3m"},
		{"stall state whatever the scrape",
			` and on (cluster, namespace, instance) (min by (cluster, namespace, instance) (up{pod=""}) == 1) and on (cluster, namespace, instance, model_name, engine) group by (cluster, namespace, instance, model_name, engine) (count_over_time(vllm:num_requests_running{pod=""}[3m] offset 3m))`,
			` and on (cluster, namespace, instance, model_name, engine) group by (cluster, namespace, instance, model_name, engine) (count_over_time(vllm:num_requests_running{pod=""}[3m] offset 3m))`,
			"engine:vllm_stalled:3m"},
		{"stall state awake or asleep",
			`(max_over_time(vllm:engine_sleep_state{sleep_state!="awake", pod=""}[3m])) == 1`,
			`(max_over_time(vllm:engine_sleep_state{sleep_state!="awake", pod=""}[3m])) == 2`, "engine:vllm_stalled:3m"},
		{"stall state of a pod's engine summed with its namespace",
			`(sum by (cluster, namespace, pod, model_name, engine) (min_over_time(vllm:num_requests_running{pod!=""}[5m])) + sum by (cluster, namespace, pod, model_name, engine) (min_over_time(vllm:num_requests_waiting{pod!=""}[5m])))`,
			`(sum by (cluster, namespace, pod, model_name, engine) (min_over_time(vllm:num_requests_running{pod!=""}[5m])) + sum by (cluster, namespace, pod, model_name, engine) (min_over_time(vllm:num_requests_waiting{pod!=""}[5m])) * 2)`,
			"engine:vllm_stalled:5m"},
		{"stall state without its zero rows",
			"          or\n          0 * sum by (cluster, namespace, instance, model_name, engine) (min_over_time(vllm:num_requests_running{pod=\"\"}[3m]))\n", "\n",
			"engine:vllm_stalled:3m"},
		{"per-server quantile of each engine's buckets, not the server's",
			`histogram_quantile(0.5, sum by (le, cluster, namespace, instance, model_name) (rate(vllm:request_queue_time_seconds_bucket{pod=""}[1m])))`,
			`histogram_quantile(0.5, sum by (le, cluster, namespace, instance, model_name, engine) (rate(vllm:request_queue_time_seconds_bucket{pod=""}[1m])))`,
			"engine:vllm_request_queue_time_seconds:server_p50_rate1m"},
		{"per-engine p90 recorded as p50",
			`histogram_quantile(0.9, sum by (le, cluster, namespace, instance, model_name, engine) (rate(vllm:request_queue_time_seconds_bucket{pod=""}[5m])))`,
			`histogram_quantile(0.5, sum by (le, cluster, namespace, instance, model_name, engine) (rate(vllm:request_queue_time_seconds_bucket{pod=""}[5m])))`,
			"engine:vllm_request_queue_time_seconds:p90_rate5m"},
		{"per-server TTFT of pods per pod IP",
			`histogram_quantile(0.9, sum by (le, cluster, namespace, pod, model_name) (rate(vllm:time_to_first_token_seconds_bucket{pod!=""}[5m])))`,
			`histogram_quantile(0.9, sum by (le, cluster, namespace, pod, instance, model_name) (rate(vllm:time_to_first_token_seconds_bucket{pod!=""}[5m])))`,
			"engine:vllm_time_to_first_token_seconds:server_p90_rate5m"},
		{"per-server mean as an average of the engines' seconds",
			`sum by (cluster, namespace, instance, model_name) (rate(vllm:request_queue_time_seconds_sum{pod=""}[5m]))`,
			`avg by (cluster, namespace, instance, model_name) (rate(vllm:request_queue_time_seconds_sum{pod=""}[5m]))`,
			"engine:vllm_request_queue_time_seconds:server_mean_rate5m"},
		{"finished requests without finished_reason",
			`engine, finished_reason) (rate(vllm:request_success_total{pod=""}[1m]))`,
			`engine) (rate(vllm:request_success_total{pod=""}[1m]))`, "engine:vllm_request_success:rate1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, 1, strings.Count(string(original), tt.old), "%q must occur exactly once in %s", tt.old, recordingRulesFile)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "vllm-recording.rules.yml"), strings.Replace(string(original), tt.old, tt.new, 1))
			writeFile(t, filepath.Join(dir, "vllm-recording.rules.test.yml"), string(unitTests))
			out, ok := runTool(t, dir, bin, "test", "rules", "vllm-recording.rules.test.yml")
			require.False(t, ok, "promtool test rules passed with a broken rule file; output:\n%s", out)
			require.Contains(t, out, "FAILED", out)
			require.Contains(t, out, tt.want, "promtool failed, but not where expected:\n%s", out)
		})
	}
}

// vmalert returns the path of VictoriaMetrics' rule evaluator, which
// Debian's victoria-metrics package installs (scripts/test.sh installs it).
func vmalert(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("VMALERT_BIN"), "vmalert", "/usr/bin/vmalert"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("vmalert is not installed: run the README's test command (bash scripts/test.sh installs it " +
		"with `apt-get install -y victoria-metrics`) or set VMALERT_BIN")
	return ""
}

// TestVMAlertDryRun: vmalert (VictoriaMetrics' ruler, MetricsQL) parses
// every shipped rule file, so the rules load there as they are; a broken
// expression is refused, so the check can fail.
func TestVMAlertDryRun(t *testing.T) {
	bin := vmalert(t)
	files, err := filepath.Glob(repoPath(t, "deploy/prometheus/rules/*.rules.yml"))
	require.NoError(t, err)
	require.Contains(t, files, repoPath(t, recordingRulesFile))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, ok := runTool(t, repoRoot(t), bin, "-dryRun", "-rule="+f)
			require.True(t, ok, "vmalert -dryRun -rule=%s failed:\n%s", f, out)
		})
	}
	t.Run("a broken expression is refused", func(t *testing.T) {
		raw, err := os.ReadFile(repoPath(t, recordingRulesFile))
		require.NoError(t, err)
		broken := filepath.Join(t.TempDir(), "broken.rules.yml")
		writeFile(t, broken, strings.Replace(string(raw), "or ignoring (le)\n", "or ignoring (le\n", 1))
		out, ok := runTool(t, repoRoot(t), bin, "-dryRun", "-rule="+broken)
		require.False(t, ok, "vmalert accepted a broken expression:\n%s", out)
		require.Contains(t, out, "engine:vllm_inter_token_latency_seconds_bucket:rate1m", out)
	})
}

// TestRecordingRulesOnSimulatedFleet runs the demo's Prometheus against the
// fleet of deploy/vllm-sim.flags and checks that the recording rules give
// one series per engine (per engine and le for buckets) on vLLM's real
// metric shapes: exactly as many as the raw series grouped the same way.
func TestRecordingRulesOnSimulatedFleet(t *testing.T) {
	t.Parallel()
	_, flags := simFlags(t)
	instances, err := strconv.Atoi(flags["instances"])
	require.NoError(t, err)
	engines, err := strconv.Atoi(flags["engines-per-instance"])
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "prometheus")
	copyTree(t, repoPath(t, "deploy/prometheus"), dir)
	startSimViaEntrypoint(t, filepath.Join(dir, "targets", "vllm.json"))
	prom := startPrometheus(t, filepath.Join(dir, "prometheus.yml"))
	prom.waitForTargets(t, "vllm", instances)

	perEngine := instances * engines
	for rec, raw := range map[string]string{
		"engine:vllm_kv_cache_usage_perc:max":                      "",
		"engine:vllm_num_requests_waiting:sum":                     "",
		"engine:vllm_generation_tokens:rate1m":                     "",
		"engine:vllm_request_queue_time_seconds_count:rate5m":      "",
		"engine:vllm_time_to_first_token_seconds_bucket:rate1m":    "vllm:time_to_first_token_seconds_bucket",
		"engine:vllm_inter_token_latency_seconds_bucket:rate5m":    "vllm:inter_token_latency_seconds_bucket or ignoring (le) vllm:time_per_output_token_seconds_bucket",
		"engine:vllm_request_inference_time_seconds_bucket:rate1m": "vllm:request_inference_time_seconds_bucket",
	} {
		t.Run(rec, func(t *testing.T) {
			want := perEngine
			if raw != "" {
				// The simulator's engines expose a histogram once they have
				// served a request: wait for all of them.
				eventually(t, 90*time.Second, func() string {
					if n := len(prom.Query(t, "count by (instance, engine) ("+raw+")")); n < perEngine {
						return fmt.Sprintf("%s: %d of %d engines", raw, n, perEngine)
					}
					return ""
				})
				want = len(prom.Query(t, "count by (instance, engine, le) ("+raw+")"))
				require.Greater(t, want, perEngine, "%s: several buckets per engine", raw)
			}
			prom.WaitForSeries(t, rec, want, 90*time.Second)
			require.Len(t, prom.Query(t, rec), want, "%s: one series per engine (and le)", rec)
		})
	}
}
