package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

const (
	rulesFile     = "deploy/prometheus/rules/vllm.rules.yml"
	rulesTestFile = "deploy/prometheus/rules/vllm.rules.test.yml"
	// rulesOperatorTestFile tests the same rules on prometheus-operator's
	// labels (job <namespace>/vllm, a server is its namespace and pod).
	rulesOperatorTestFile = "deploy/prometheus/rules/vllm.rules.operator.test.yml"
	// recordingRulesFile pre-computes the plugin's expensive series per
	// engine; recordingRulesTestFile tests it on both label shapes.
	recordingRulesFile     = "deploy/prometheus/rules/vllm-recording.rules.yml"
	recordingRulesTestFile = "deploy/prometheus/rules/vllm-recording.rules.test.yml"
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
	dir := promConfigDir(t)
	tests := []struct {
		name, config string
		// promtool is the promtool of the Prometheus that runs the config.
		promtool string
		// allowedWarnings match warnings that are expected for this config.
		allowedWarnings *regexp.Regexp
	}{
		{name: "demo and tests", config: "prometheus.yml", promtool: promtool(t)},
		{
			// The compose stack runs Prometheus 3 (its config sets the retention,
			// a field 2.42 lacks), and reads its targets from the volume
			// /targets, which exists only inside the container.
			name: "docker compose", config: "prometheus.compose.yml", promtool: promtest.Promtool3Binary(t),
			allowedWarnings: regexp.MustCompile(`file "/targets/vllm\.json" for file_sd in scrape job "vllm" does not exist`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := runTool(t, dir, tt.promtool, "check", "config", tt.config)
			require.True(t, ok, "promtool check config %s failed:\n%s", tt.config, out)
			require.Contains(t, out, "Checking rules/vllm.rules.yml",
				"the rule_files glob did not load the vLLM rules:\n%s", out)
			require.Contains(t, out, "Checking rules/vllm-recording.rules.yml",
				"the rule_files glob did not load the recording rules:\n%s", out)
			require.NotContains(t, out, ".test.yml", "the rule_files glob loads the unit tests as rules:\n%s", out)
			for _, w := range warningRe.FindAllString(out, -1) {
				if tt.allowedWarnings == nil || !tt.allowedWarnings.MatchString(w) {
					t.Errorf("promtool check config %s warns: %s\nfull output:\n%s", tt.config, strings.TrimSpace(w), out)
				}
			}
		})
	}
}

// TestPromtoolCheckRules: the rule files parse and every expression and
// template is valid.
func TestPromtoolCheckRules(t *testing.T) {
	for _, f := range []string{rulesFile, recordingRulesFile} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, ok := runTool(t, repoRoot(t), promtool(t), "check", "rules", f)
			require.True(t, ok, "promtool check rules %s failed:\n%s", f, out)
			require.Contains(t, out, "SUCCESS", out)
		})
	}
}

// TestPromtoolTestRules: the rule unit tests pass on both label shapes
// (each alert fires in its firing case and stays silent in its other cases;
// the recorded quantiles have the computed values on V1, V0 and mixed
// instances; on Kubernetes a server is its pod, across pod IP changes and
// replaced pods; the recording rules' per-engine rates are exact).
func TestPromtoolTestRules(t *testing.T) {
	for _, f := range []string{rulesTestFile, rulesOperatorTestFile, recordingRulesTestFile} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, ok := runTool(t, repoRoot(t), promtool(t), "test", "rules", f)
			require.True(t, ok, "promtool test rules %s failed:\n%s", f, out)
			require.Contains(t, out, "SUCCESS", out)
		})
	}
}

// TestRuleUnitTestsCanFail breaks the rules on purpose, one way at a time,
// in a temporary copy, and requires promtool test rules (both label shapes'
// tests) to fail for the right reason: a test suite that cannot fail proves
// nothing.
func TestRuleUnitTestsCanFail(t *testing.T) {
	bin := promtool(t)
	original, err := os.ReadFile(repoPath(t, rulesFile))
	require.NoError(t, err)
	const (
		podQueueP99   = "histogram_quantile(0.99,\n              sum by (le, cluster, namespace, pod, model_name) (rate(vllm:request_queue_time_seconds_bucket{pod!=\"\"}[5m]))"
		plainQueueP99 = "sum by (le, cluster, namespace, instance, model_name) (rate(vllm:request_queue_time_seconds_bucket{pod=\"\"}[5m]))\n          )\n\n      - record: instance:vllm_time_to_first_token"
		serverName    = "{{ with $labels.pod }}{{ with $labels.namespace }}{{ . }}/{{ end }}{{ . }}{{ else }}{{ $labels.instance }}{{ end }}"
	)
	tests := []struct {
		name     string
		old, new string
		// wantInOutput is part of promtool's failure report.
		wantInOutput string
	}{
		{
			name: "backlog threshold raised: the firing case stops firing",
			old:  ") > 50\n", new: ") > 500\n", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name: "backlog threshold lowered: the not-firing case fires",
			old:  ") > 50\n", new: ") > 40\n", wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "backlog per engine instead of per instance",
			old:          `sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting{pod=""})`,
			new:          `sum by (cluster, namespace, instance, model_name, engine) (vllm:num_requests_waiting{pod=""})`,
			wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "backlog summed over clusters: two clusters' servers of one name add up",
			old:          `sum by (cluster, namespace, instance, model_name) (vllm:num_requests_waiting{pod=""})`,
			new:          `sum by (instance, model_name) (vllm:num_requests_waiting{pod=""})`,
			wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "Kubernetes backlog per pod IP: a rescheduled pod's alert starts over",
			old:          `sum by (cluster, namespace, pod, model_name) (vllm:num_requests_waiting{pod!=""})`,
			new:          `sum by (cluster, namespace, pod, instance, model_name) (vllm:num_requests_waiting{pod!=""})`,
			wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "Kubernetes backlog per pod name only: namespaces mix",
			old:          `sum by (cluster, namespace, pod, model_name) (vllm:num_requests_waiting{pod!=""})`,
			new:          `sum by (cluster, pod, model_name) (vllm:num_requests_waiting{pod!=""})`,
			wantInOutput: "alertname: VLLMQueueBacklog",
		},
		{
			name:         "queue-time quantile across clusters: the two clusters' buckets mix",
			old:          plainQueueP99,
			new:          strings.Replace(plainQueueP99, "le, cluster, namespace, instance", "le, instance", 1),
			wantInOutput: "instance:vllm_request_queue_time_seconds:p99_rate5m",
		},
		{
			name:         "Kubernetes queue-time quantile per pod IP: one pod, two series",
			old:          podQueueP99,
			new:          strings.Replace(podQueueP99, "pod, model_name", "pod, instance, model_name", 1),
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
			old:  `(vllm:kv_cache_usage_perc{pod=""} or vllm:gpu_cache_usage_perc{pod=""})`, new: `(vllm:kv_cache_usage_perc{pod=""})`,
			wantInOutput: "instance:vllm_kv_cache_usage_perc:max",
		},
		{
			name:         "Kubernetes KV usage per pod IP",
			old:          `max by (cluster, namespace, pod, model_name) (vllm:kv_cache_usage_perc{pod!=""}`,
			new:          `max by (cluster, namespace, pod, instance, model_name) (vllm:kv_cache_usage_perc{pod!=""}`,
			wantInOutput: "instance:vllm_kv_cache_usage_perc:max",
		},
		{
			name: "preemption rate threshold raised",
			old:  ") > 0.1\n", new: ") > 0.2\n",
			wantInOutput: "alertname: VLLMPreemptionsSustained",
		},
		{
			name:         "Kubernetes preemptions per pod IP",
			old:          `sum by (cluster, namespace, pod, model_name) (rate(vllm:num_preemptions_total{pod!=""}[5m]))`,
			new:          `sum by (cluster, namespace, pod, instance, model_name) (rate(vllm:num_preemptions_total{pod!=""}[5m]))`,
			wantInOutput: "alertname: VLLMPreemptionsSustained",
		},
		{
			name:         "inter-token p99 without the V0 name",
			old:          "\n                or ignoring (le)\n                  rate(vllm:time_per_output_token_seconds_bucket{pod=\"\"}[5m])",
			new:          "",
			wantInOutput: "instance:vllm_inter_token_latency_seconds:p99_rate5m",
		},
		{
			name:         "Kubernetes inter-token p99 without the V0 name",
			old:          "\n                or ignoring (le)\n                  rate(vllm:time_per_output_token_seconds_bucket{pod!=\"\"}[5m])",
			new:          "",
			wantInOutput: "instance:vllm_inter_token_latency_seconds:p99_rate5m",
		},
		{
			name:         "inter-token p99 mixing old and new buckets",
			old:          "rate(vllm:inter_token_latency_seconds_bucket{pod=\"\"}[5m])\n                or ignoring (le)\n",
			new:          "rate(vllm:inter_token_latency_seconds_bucket{pod=\"\"}[5m])\n                or\n",
			wantInOutput: "instance:vllm_inter_token_latency_seconds:p99_rate5m",
		},
		{
			name:         "queue p99 recorded as p90",
			old:          podQueueP99,
			new:          strings.Replace(podQueueP99, "0.99", "0.90", 1),
			wantInOutput: "instance:vllm_request_queue_time_seconds:p99_rate5m",
		},
		{
			name: "engine down never fires",
			old:  ") == 0\n", new: ") == 0 and on () vector(0) == 1\n",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down on Kubernetes selects job vllm only",
			old:          "(up{job=~\"(.+/)?vllm\", pod!=\"\"})\n            or",
			new:          "(up{job=\"vllm\", pod!=\"\"})\n            or",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down matches any job containing vllm: the node agent alerts",
			old:          "(up{job=~\"(.+/)?vllm\", pod=\"\"})\n          ) == 0",
			new:          "(up{job=~\".*vllm.*\", pod=\"\"})\n          ) == 0",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down loses its severity",
			old:          "severity: critical\n        annotations:\n          summary: \"vLLM server " + serverName + " is down\"",
			new:          "severity: warning\n        annotations:\n          summary: \"vLLM server " + serverName + " is down\"",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down named by pod IP on Kubernetes",
			old:          "summary: \"vLLM server " + serverName + " is down\"",
			new:          "summary: \"vLLM server {{ $labels.instance }} is down\"",
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name:         "engine down looks the pod's last model up by instance",
			old:          `{{ with $labels.pod }}{{ $sel = printf "cluster=%q,namespace=%q,pod=%q" $labels.cluster $labels.namespace . }}{{ end }}{{ with printf "last_over_time(`,
			new:          `{{ with printf "last_over_time(`,
			wantInOutput: "alertname: VLLMEngineDown",
		},
		{
			name: "metrics-missing fires for healthy servers",
			old:  "unless on (cluster, namespace, instance)\n              vllm:num_requests_running", new: "unless on (cluster, namespace, instance)\n              vllm:num_requests_waiting",
			wantInOutput: "alertname: VLLMMetricsMissing",
		},
		{
			name:         "Kubernetes metrics-missing per pod IP",
			old:          "max by (cluster, namespace, pod) (up{job=~\"(.+/)?vllm\", pod!=\"\"}) == 1\n            unless",
			new:          "max by (cluster, namespace, pod, instance) (up{job=~\"(.+/)?vllm\", pod!=\"\"}) == 1\n            unless",
			wantInOutput: "alertname: VLLMMetricsMissing",
		},
		{
			name: "targets-missing watches another job",
			old:  `absent(up{job=~"(.+/)?vllm"})`, new: `absent(up{job="vllm-typo"})`,
			wantInOutput: "alertname: VLLMTargetsMissing",
		},
		{
			name: "targets-missing watches job vllm only: fires forever on Kubernetes",
			old:  `absent(up{job=~"(.+/)?vllm"})`, new: `absent(up{job="vllm"})`,
			wantInOutput: "alertname: VLLMTargetsMissing",
		},
		{
			name:         "stall ignores sleep mode: the sleeping engine fires",
			old:          `max_over_time(vllm:engine_sleep_state{sleep_state!="awake", pod=""}[3m]) == 1`,
			new:          `vector(0) == 1`,
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "Kubernetes stall ignores sleep mode",
			old:          `max_over_time(vllm:engine_sleep_state{sleep_state!="awake", pod!=""}[3m]) == 1`,
			new:          `vector(0) == 1`,
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall without the up check: a down target's last samples read as a stall",
			old:          "\n            and on (cluster, namespace, instance)\n              max by (cluster, namespace, instance) (up{job=~\"(.+/)?vllm\", pod=\"\"}) == 1",
			new:          "",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "Kubernetes stall without the up check",
			old:          "\n            and on (cluster, namespace, pod)\n              max by (cluster, namespace, pod) (up{job=~\"(.+/)?vllm\", pod!=\"\"}) == 1",
			new:          "",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall without the demand check: an idle engine fires",
			old:          ") > 0\n            unless on (cluster, namespace, instance)",
			new:          ") >= 0\n            unless on (cluster, namespace, instance)",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall ignores generation tokens: the slow engine fires",
			old:          "sum by (cluster, namespace, instance) (increase(vllm:generation_tokens_total{pod=\"\"}[3m])) > 0\n                or\n",
			new:          "",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall ignores prompt tokens: a long prefill fires",
			old:          "\n                or\n                  sum by (cluster, namespace, instance) (increase(vllm:prompt_tokens_total{pod=\"\"}[3m])) > 0",
			new:          "",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall ignores finished requests",
			old:          "\n                or\n                  sum by (cluster, namespace, instance) (increase(vllm:request_success_total{pod=\"\"}[3m])) > 0",
			new:          "",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall fires without waiting: for shortened",
			old:          "== 1\n          )\n        for: 2m",
			new:          "== 1\n          )\n        for: 30s",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "stall is only a warning",
			old:          "severity: critical\n        annotations:\n          summary: \"vLLM server " + serverName + " is stalled",
			new:          "severity: warning\n        annotations:\n          summary: \"vLLM server " + serverName + " is stalled",
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "Kubernetes stall per pod IP",
			old:          `sum by (cluster, namespace, pod, model_name) (min_over_time(vllm:num_requests_running{pod!=""}[3m]))`,
			new:          `sum by (cluster, namespace, pod, instance, model_name) (min_over_time(vllm:num_requests_running{pod!=""}[3m]))`,
			wantInOutput: "alertname: VLLMEngineStalled",
		},
		{
			name:         "scrape flapping on one failed scrape: the single failure and the restart fire",
			old:          ") >= 4\n        for: 5m",
			new:          ") >= 2\n        for: 5m",
			wantInOutput: "alertname: VLLMScrapeFlapping",
		},
		{
			name:         "scrape flapping without waiting: for shortened",
			old:          ") >= 4\n        for: 5m",
			new:          ") >= 4\n        for: 1m",
			wantInOutput: "alertname: VLLMScrapeFlapping",
		},
		{
			name:         "scrape flapping of any job: the node exporter fires",
			old:          `max by (cluster, namespace, instance) (changes(up{job=~"(.+/)?vllm", pod=""}[15m]))`,
			new:          `max by (cluster, namespace, instance) (changes(up{pod=""}[15m]))`,
			wantInOutput: "alertname: VLLMScrapeFlapping",
		},
		{
			name:         "Kubernetes scrape flapping per pod IP: the rescheduled pod's count starts over",
			old:          `max by (cluster, namespace, pod) (changes(up{job=~"(.+/)?vllm", pod!=""}[15m]))`,
			new:          `max by (cluster, namespace, pod, instance) (changes(up{job=~"(.+/)?vllm", pod!=""}[15m]))`,
			wantInOutput: "alertname: VLLMScrapeFlapping",
		},
		{
			name:         "scrape flapping without the timeout in its description",
			old:          `{{ with printf "max(scrape_timeout_seconds{%s})" $sel | query }} of its {{ . | first | value | humanizeDuration }} timeout{{ end }}`,
			new:          "",
			wantInOutput: "alertname: VLLMScrapeFlapping",
		},
		{
			name:         "prefix-cache hits without the V1 0.7.3-0.11 name",
			old:          "\n                or\n                  rate(vllm:gpu_prefix_cache_hits_total{pod=\"\"}[5m])",
			new:          "",
			wantInOutput: "instance:vllm_prefix_cache_hit_ratio:rate5m",
		},
		{
			name:         "prefix-cache hit ratio recorded while idle: NaN poisons the baseline",
			old:          "/ (instance:vllm_prefix_cache_queries:rate5m > 0)",
			new:          "/ instance:vllm_prefix_cache_queries:rate5m",
			wantInOutput: "instance:vllm_prefix_cache_hit_ratio:rate5m",
		},
		{
			name:         "Kubernetes prefix-cache hits per pod IP",
			old:          "sum by (cluster, namespace, pod, model_name) (\n                  rate(vllm:prefix_cache_hits_total{pod!=\"\"}[5m])",
			new:          "sum by (cluster, namespace, pod, instance, model_name) (\n                  rate(vllm:prefix_cache_hits_total{pod!=\"\"}[5m])",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "prefix-cache collapse needs a 90% drop: the collapse is missed",
			old:          "< 0.5 * (avg_over_time(",
			new:          "< 0.1 * (avg_over_time(",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "prefix-cache collapse on a nearly idle engine",
			old:          "instance:vllm_prefix_cache_queries:rate5m > 100",
			new:          "instance:vllm_prefix_cache_queries:rate5m > 10",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "prefix-cache collapse without a floor: noise at a low ratio fires",
			old:          "[1h]) >= 0.2)",
			new:          "[1h]) >= 0)",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "prefix-cache baseline over 10 minutes: the collapse becomes its own baseline",
			old:          "avg_over_time(instance:vllm_prefix_cache_hit_ratio:rate5m[1h]) >= 0.2",
			new:          "avg_over_time(instance:vllm_prefix_cache_hit_ratio:rate5m[10m]) >= 0.2",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "prefix-cache collapse for shortened",
			old:          "> 100\n        for: 10m",
			new:          "> 100\n        for: 5m",
			wantInOutput: "alertname: VLLMPrefixCacheHitRateCollapse",
		},
		{
			name:         "KV-transfer failures threshold raised",
			old:          "          ) > 0\n        for: 2m",
			new:          "          ) > 10\n        for: 2m",
			wantInOutput: "alertname: VLLMKVTransferFailures",
		},
		{
			name:         "KV-transfer alert counts notifications instead of transfers",
			old:          `sum by (cluster, namespace, instance, model_name) (increase(vllm:nixl_num_failed_transfers_total{pod=""}[5m]))`,
			new:          `sum by (cluster, namespace, instance, model_name) (increase(vllm:nixl_num_failed_notifications_total{pod=""}[5m]))`,
			wantInOutput: "alertname: VLLMKVTransferFailures",
		},
		{
			name:         "Kubernetes KV-transfer failures per pod IP",
			old:          `sum by (cluster, namespace, pod, model_name) (increase(vllm:nixl_num_failed_transfers_total{pod!=""}[5m]))`,
			new:          `sum by (cluster, namespace, pod, instance, model_name) (increase(vllm:nixl_num_failed_transfers_total{pod!=""}[5m]))`,
			wantInOutput: "alertname: VLLMKVTransferFailures",
		},
		{
			name:         "KV-transfer description counts notifications over a minute",
			old:          "vllm:nixl_num_failed_notifications_total{%s}[5m]",
			new:          "vllm:nixl_num_failed_notifications_total{%s}[1m]",
			wantInOutput: "alertname: VLLMKVTransferFailures",
		},
		{
			name:         "KV-offload failures threshold raised",
			old:          "          ) > 0\n        for: 10m\n        labels:\n          severity: warning\n        annotations:\n          summary: \"vLLM KV-offload",
			new:          "          ) > 20\n        for: 10m\n        labels:\n          severity: warning\n        annotations:\n          summary: \"vLLM KV-offload",
			wantInOutput: "alertname: VLLMKVOffloadAllocationFailures",
		},
		{
			name:         "KV-offload failures for shortened: a single failure fires",
			old:          "          ) > 0\n        for: 10m\n        labels:\n          severity: warning\n        annotations:\n          summary: \"vLLM KV-offload",
			new:          "          ) > 0\n        for: 3m\n        labels:\n          severity: warning\n        annotations:\n          summary: \"vLLM KV-offload",
			wantInOutput: "alertname: VLLMKVOffloadAllocationFailures",
		},
		{
			name:         "Kubernetes KV-offload failures per pod IP: a restart splits the alert",
			old:          `sum by (cluster, namespace, pod, model_name) (increase(vllm:kv_offload_allocation_failure_total{pod!=""}[5m]))`,
			new:          `sum by (cluster, namespace, pod, instance, model_name) (increase(vllm:kv_offload_allocation_failure_total{pod!=""}[5m]))`,
			wantInOutput: "alertname: VLLMKVOffloadAllocationFailures",
		},
		{
			name:         "KV-offload description reads the load instead of the store rate",
			old:          `sum(rate(vllm:kv_offload_store_bytes_total{%s}[5m]))`,
			new:          `sum(rate(vllm:kv_offload_load_bytes_total{%s}[5m]))`,
			wantInOutput: "alertname: VLLMKVOffloadAllocationFailures",
		},
		{
			name: "summary loses the model",
			old:  `summary: "vLLM queue backlog on ` + serverName + ` ({{ $labels.model_name }})"`,
			new:  `summary: "vLLM queue backlog on ` + serverName + `"`, wantInOutput: "alertname: VLLMQueueBacklog",
		},
	}
	testFiles := []string{rulesTestFile, rulesOperatorTestFile}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, 1, strings.Count(string(original), tt.old),
				"the mutation must change exactly one place in %s, and %q does not occur exactly once", rulesFile, tt.old)
			dir := t.TempDir()
			broken := strings.Replace(string(original), tt.old, tt.new, 1)
			writeFile(t, filepath.Join(dir, "vllm.rules.yml"), broken)
			args := []string{"test", "rules"}
			for _, f := range testFiles {
				tests, err := os.ReadFile(repoPath(t, f))
				require.NoError(t, err)
				writeFile(t, filepath.Join(dir, filepath.Base(f)), string(tests))
				args = append(args, filepath.Base(f))
			}

			out, ok := runTool(t, dir, bin, args...)
			require.False(t, ok, "promtool test rules passed with a broken rule file; output:\n%s", out)
			require.Contains(t, out, "FAILED", out)
			require.Contains(t, out, tt.wantInOutput, "promtool failed, but not where expected:\n%s", out)
		})
	}
}
