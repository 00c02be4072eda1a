package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	rulesFile     = "deploy/prometheus/rules/vllm.rules.yml"
	rulesTestFile = "deploy/prometheus/rules/vllm.rules.test.yml"
)

// sampleTargets is a file_sd file in the format vllm-sim writes.
const sampleTargets = `[{"targets": ["127.0.0.1:8000", "127.0.0.1:8001"]}]`

// promConfigDir copies deploy/prometheus into a temporary folder and adds
// the targets folder that vllm-sim (targets/vllm.json), the node agents
// (targets/agents.json) and the demo's node exporter (targets/node.json) fill at run time, so that promtool sees the config
// exactly as Prometheus does in the demo.
func promConfigDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "prometheus")
	copyTree(t, repoPath(t, "deploy/prometheus"), dir)
	writeFile(t, filepath.Join(dir, "targets", "vllm.json"), sampleTargets)
	writeFile(t, filepath.Join(dir, "targets", "agents.json"), `[{"targets": ["127.0.0.1:9400"]}]`)
	writeFile(t, filepath.Join(dir, "targets", "node.json"), `[{"targets": ["127.0.0.1:9100"]}]`)
	return dir
}

// warningRe matches promtool's warning lines.
var warningRe = regexp.MustCompile(`(?m)^\s*WARNING:.*$`)

// TestPromtoolCheckConfig: both Prometheus configs are valid, load the rule
// file (and not its unit tests) through their rule_files glob, and the demo
// config draws no warning once the targets files exist.
func TestPromtoolCheckConfig(t *testing.T) {
	bin := promtool(t)
	dir := promConfigDir(t)
	tests := []struct {
		name, config string
		// allowedWarnings match warnings that are expected for this config.
		allowedWarnings *regexp.Regexp
	}{
		{name: "demo and tests", config: "prometheus.yml"},
		{
			// The compose config reads its targets from the volume /targets,
			// which exists only inside the container.
			name: "docker compose", config: "prometheus.compose.yml",
			allowedWarnings: regexp.MustCompile(`file "/targets/vllm\.json" for file_sd in scrape job "vllm" does not exist`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := runTool(t, dir, bin, "check", "config", tt.config)
			require.True(t, ok, "promtool check config %s failed:\n%s", tt.config, out)
			require.Contains(t, out, "Checking rules/vllm.rules.yml",
				"the rule_files glob did not load the vLLM rules:\n%s", out)
			require.NotContains(t, out, "vllm.rules.test.yml", "the rule_files glob loads the unit tests as rules:\n%s", out)
			for _, w := range warningRe.FindAllString(out, -1) {
				if tt.allowedWarnings == nil || !tt.allowedWarnings.MatchString(w) {
					t.Errorf("promtool check config %s warns: %s\nfull output:\n%s", tt.config, strings.TrimSpace(w), out)
				}
			}
		})
	}
}

// TestPromtoolCheckRules: the rule file parses and every expression and
// template is valid.
func TestPromtoolCheckRules(t *testing.T) {
	out, ok := runTool(t, repoRoot(t), promtool(t), "check", "rules", rulesFile)
	require.True(t, ok, "promtool check rules %s failed:\n%s", rulesFile, out)
	require.Contains(t, out, "SUCCESS", out)
}

// TestPromtoolTestRules: the rule unit tests pass (each alert fires in its
// firing case and stays silent in its other cases; the recorded quantiles
// have the computed values on V1, V0 and mixed instances).
func TestPromtoolTestRules(t *testing.T) {
	out, ok := runTool(t, repoRoot(t), promtool(t), "test", "rules", rulesTestFile)
	require.True(t, ok, "promtool test rules %s failed:\n%s", rulesTestFile, out)
	require.Contains(t, out, "SUCCESS", out)
}

// TestRuleUnitTestsCanFail breaks the rules on purpose, one way at a time,
// in a temporary copy, and requires promtool test rules to fail for the
// right reason: a test suite that cannot fail proves nothing.
func TestRuleUnitTestsCanFail(t *testing.T) {
	bin := promtool(t)
	original, err := os.ReadFile(repoPath(t, rulesFile))
	require.NoError(t, err)
	tests := []struct {
		name     string
		old, new string
		// wantInOutput is part of promtool's failure report.
		wantInOutput string
	}{
		{
			name: "backlog threshold raised: the firing case stops firing",
			old:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 50",
			new:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 500", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name: "backlog threshold lowered: the not-firing case fires",
			old:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 50",
			new:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 40", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name: "backlog per engine instead of per instance",
			old:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 50",
			new:  "vllm:num_requests_waiting > 50", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name: "backlog summed over clusters: two clusters' servers of one name add up",
			old:  "sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting) > 50",
			new:  "sum by (instance, model_name) (vllm:num_requests_waiting) > 50", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "queue-time quantile across clusters: the two clusters' buckets mix",
			old:          "histogram_quantile(0.99, sum by (le, cluster, namespace, instance, model_name) (rate(vllm:request_queue_time_seconds_bucket[5m])))",
			new:          "histogram_quantile(0.99, sum by (le, instance, model_name) (rate(vllm:request_queue_time_seconds_bucket[5m])))",
			wantInOutput: "instance:vllm_request_queue_time_seconds:p99_rate5m",
		},
		{
			name: "queue wait threshold raised",
			old:  "instance:vllm_request_queue_time_seconds:p99_rate5m > 1\n",
			new:  "instance:vllm_request_queue_time_seconds:p99_rate5m > 3\n", wantInOutput: "alertname: VLLMQueueWaitP99High",
		},
		{
			name: "KV threshold raised",
			old:  "instance:vllm_kv_cache_usage_perc:max > 0.9", new: "instance:vllm_kv_cache_usage_perc:max > 0.98",
			wantInOutput: "alertname: VLLMKVCacheNearlyFull",
		},
		{
			name: "KV alert without for: the short spike fires",
			old:  "instance:vllm_kv_cache_usage_perc:max > 0.9\n        for: 10m",
			new:  "instance:vllm_kv_cache_usage_perc:max > 0.9\n        for: 1m", wantInOutput: "alertname: VLLMKVCacheNearlyFull",
		},
		{
			name: "KV usage of V1 only: the V0 instance is missed",
			old:  "(vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc)", new: "(vllm:kv_cache_usage_perc)",
			wantInOutput: "instance:vllm_kv_cache_usage_perc:max",
		},
		{
			name: "preemption rate threshold raised",
			old:  "(rate(vllm:num_preemptions_total[5m])) > 0.1", new: "(rate(vllm:num_preemptions_total[5m])) > 0.2",
			wantInOutput: "alertname: VLLMPreemptionsSustained",
		},
		{
			name: "inter-token p99 without the V0 name",
			old:  "\n            or ignoring (le)\n              rate(vllm:time_per_output_token_seconds_bucket[5m])", new: "",
			wantInOutput: "instance:vllm_inter_token_latency_seconds:p99_rate5m",
		},
		{
			name: "inter-token p99 mixing old and new buckets",
			old:  "\n            or ignoring (le)\n", new: "\n            or\n",
			wantInOutput: "instance:vllm_inter_token_latency_seconds:p99_rate5m",
		},
		{
			name:         "queue p99 recorded as p90",
			old:          "record: instance:vllm_request_queue_time_seconds:p99_rate5m\n        expr: histogram_quantile(0.99",
			new:          "record: instance:vllm_request_queue_time_seconds:p99_rate5m\n        expr: histogram_quantile(0.90",
			wantInOutput: "instance:vllm_request_queue_time_seconds:p99_rate5m",
		},
		{
			name: "engine down never fires",
			old:  `expr: up{job="vllm"} == 0`, new: `expr: up{job="vllm"} == 0 and up{job="vllm"} == 1`,
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down loses its severity",
			old:          "severity: critical\n        annotations:\n          summary: \"vLLM server {{ $labels.instance }} is down\"",
			new:          "severity: warning\n        annotations:\n          summary: \"vLLM server {{ $labels.instance }} is down\"",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name: "metrics-missing fires for healthy servers",
			old:  "unless on (cluster, namespace, instance) vllm:num_requests_running", new: "unless on (cluster, namespace, instance) vllm:num_requests_waiting",
			wantInOutput: "alertname: VLLMMetricsMissing",
		},
		{
			name: "targets-missing watches another job",
			old:  `absent(up{job="vllm"})`, new: `absent(up{job="vllm-typo"})`,
			wantInOutput: "alertname: VLLMTargetsMissing",
		},
		{
			name: "summary loses the model",
			old:  `summary: "vLLM queue backlog on {{ $labels.instance }} ({{ $labels.model_name }})"`,
			new:  `summary: "vLLM queue backlog on {{ $labels.instance }}"`, wantInOutput: "alertname: VLLMQueueBacklog",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, 1, strings.Count(string(original), tt.old),
				"the mutation must change exactly one place in %s, and %q does not occur exactly once", rulesFile, tt.old)
			dir := t.TempDir()
			broken := strings.Replace(string(original), tt.old, tt.new, 1)
			writeFile(t, filepath.Join(dir, "vllm.rules.yml"), broken)
			tests, err := os.ReadFile(repoPath(t, rulesTestFile))
			require.NoError(t, err)
			writeFile(t, filepath.Join(dir, "vllm.rules.test.yml"), string(tests))

			out, ok := runTool(t, dir, bin, "test", "rules", "vllm.rules.test.yml")
			require.False(t, ok, "promtool test rules passed with a broken rule file; output:\n%s", out)
			require.Contains(t, out, "FAILED", out)
			require.Contains(t, out, tt.wantInOutput, "promtool failed, but not where expected:\n%s", out)
		})
	}
}
