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
	sloRulesFile     = "deploy/prometheus/rules/vllm-slo.rules.yml"
	sloRulesTestFile = "deploy/prometheus/rules/vllm-slo.rules.test.yml"
)

// TestSLORules: the SLO rule file parses, the demo config loads it through
// its rule_files glob, its alerts use severities Alertmanager routes, and
// its unit tests pass (page at a fast burn, ticket at a slow one, silence
// inside the budget, the short window resetting the page, two clusters
// kept apart, V0 and both le spellings counted; for availability, aborts
// served and a healthy fleet silent).
func TestSLORules(t *testing.T) {
	bin := promtool(t)
	out, ok := runTool(t, repoRoot(t), bin, "check", "rules", sloRulesFile)
	require.True(t, ok, "promtool check rules %s failed:\n%s", sloRulesFile, out)
	out, ok = runTool(t, promConfigDir(t), bin, "check", "config", "prometheus.yml")
	require.True(t, ok, out)
	require.Contains(t, out, "Checking rules/vllm-slo.rules.yml")
	require.NotContains(t, out, "vllm-slo.rules.test.yml")
	rules, err := os.ReadFile(repoPath(t, sloRulesFile))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`severity: (\w+)`).FindAllStringSubmatch(string(rules), -1) {
		require.Contains(t, []string{"critical", "warning"}, m[1])
	}
	out, ok = runTool(t, repoRoot(t), bin, "test", "rules", sloRulesTestFile)
	require.True(t, ok, "promtool test rules %s failed:\n%s", sloRulesTestFile, out)
	require.Contains(t, out, "SUCCESS", out)
}

// TestSLORuleTestsCanFail breaks the SLO rules one way at a time and
// requires the unit tests to fail where the break is.
func TestSLORuleTestsCanFail(t *testing.T) {
	bin := promtool(t)
	original, err := os.ReadFile(repoPath(t, sloRulesFile))
	require.NoError(t, err)
	tests := []struct {
		name, old, new, want string
	}{
		{"page factor raised: the fast burn stops paging",
			"model:vllm_ttft_slo_errors:ratio_rate1h > (14.4 * 0.01)", "model:vllm_ttft_slo_errors:ratio_rate1h > (30 * 0.01)", "alertname: VLLMTTFTBudgetBurnFast"},
		{"page without its short window: a fixed problem keeps paging",
			"model:vllm_ttft_slo_errors:ratio_rate5m > (14.4 * 0.01)", "model:vllm_ttft_slo_errors:ratio_rate1h > (14.4 * 0.01)", "alertname: VLLMTTFTBudgetBurnFast"},
		{"ticket factor raised: the slow burn files no ticket",
			"model:vllm_ttft_slo_errors:ratio_rate3d > (1 * 0.01)", "model:vllm_ttft_slo_errors:ratio_rate3d > (3 * 0.01)", "alertname: VLLMTTFTBudgetBurnSlow"},
		{"le in vLLM's spelling only: a Go client's le=\"1\" is missed",
			`{le=~"1|1\\.0"}[5m]`, `{le="1.0"}[5m]`, "model:vllm_ttft_slo_errors:ratio_rate5m"},
		{"clusters summed together",
			"sum by (cluster, namespace, model_name) (rate(vllm:time_to_first_token_seconds_bucket{le=~\"1|1\\\\.0\"}[5m]))\n            /\n              sum by (cluster, namespace, model_name) (rate(vllm:time_to_first_token_seconds_count[5m]))",
			"sum by (namespace, model_name) (rate(vllm:time_to_first_token_seconds_bucket{le=~\"1|1\\\\.0\"}[5m]))\n            /\n              sum by (namespace, model_name) (rate(vllm:time_to_first_token_seconds_count[5m]))",
			"model:vllm_ttft_slo_errors:ratio_rate5m"},
		{"inter-token without the V0 name",
			` or rate(vllm:time_per_output_token_seconds_bucket{le=~"0\\.1"}[5m])`, "", "model:vllm_itl_slo_errors:ratio_rate5m"},
		{"availability counts the engine's aborts as errors",
			`rate(vllm:request_success_total{finished_reason="error"}[5m])`, `rate(vllm:request_success_total{finished_reason=~"error|abort"}[5m])`, "model:vllm_availability_slo_errors:ratio_rate5m"},
		{"availability page without its short window: a fixed outage keeps paging",
			"model:vllm_availability_slo_errors:ratio_rate5m > (14.4 * 0.001)", "model:vllm_availability_slo_errors:ratio_rate1h > (14.4 * 0.001)", "alertname: VLLMAvailabilityBudgetBurnFast"},
		{"availability page factors raised: the fast burn stops paging",
			"ratio_rate1h > (14.4 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate5m > (14.4 * 0.001)\n          )\n          or\n          (\n              model:vllm_availability_slo_errors:ratio_rate6h > (6 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate30m > (6 * 0.001)",
			"ratio_rate1h > (30 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate5m > (30 * 0.001)\n          )\n          or\n          (\n              model:vllm_availability_slo_errors:ratio_rate6h > (30 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate30m > (30 * 0.001)",
			"alertname: VLLMAvailabilityBudgetBurnFast"},
		{"availability ticket below the budget: the healthy fleet files a ticket",
			"ratio_rate3d > (1 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate6h > (1 * 0.001)",
			"ratio_rate3d > (0.4 * 0.001)\n            and\n              model:vllm_availability_slo_errors:ratio_rate6h > (0.4 * 0.001)", "alertname: VLLMAvailabilityBudgetBurnSlow"},
		{"availability clusters summed together",
			"sum by (cluster, namespace, model_name) (rate(vllm:request_success_total{finished_reason=\"error\"}[5m]))\n            /\n              sum by (cluster, namespace, model_name) (rate(vllm:request_success_total[5m]))",
			"sum by (namespace, model_name) (rate(vllm:request_success_total{finished_reason=\"error\"}[5m]))\n            /\n              sum by (namespace, model_name) (rate(vllm:request_success_total[5m]))",
			"model:vllm_availability_slo_errors:ratio_rate5m"},
	}
	tests2, err := os.ReadFile(repoPath(t, sloRulesTestFile))
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, 1, strings.Count(string(original), tt.old), "%q must occur exactly once in %s", tt.old, sloRulesFile)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "vllm-slo.rules.yml"), strings.Replace(string(original), tt.old, tt.new, 1))
			writeFile(t, filepath.Join(dir, "vllm-slo.rules.test.yml"), string(tests2))
			out, ok := runTool(t, dir, bin, "test", "rules", "vllm-slo.rules.test.yml")
			require.False(t, ok, "promtool test rules passed with a broken rule file; output:\n%s", out)
			require.Contains(t, out, "FAILED", out)
			require.Contains(t, out, tt.want, "promtool failed, but not where expected:\n%s", out)
		})
	}
}
