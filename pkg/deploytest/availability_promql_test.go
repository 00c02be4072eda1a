package deploytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// availabilitySeries are per-minute counters: llama's two engines end 10
// of 2000 requests a minute in error and report 100 engine aborts (served,
// not failed); qwen is V0, which has no error reason at all.
var availabilitySeries = []struct{ labels, values string }{
	{`vllm:request_success_total{job="vllm", instance="a:8000", model_name="llama", engine="0", finished_reason="stop"}`, "0+890x15"},
	{`vllm:request_success_total{job="vllm", instance="a:8000", model_name="llama", engine="0", finished_reason="error"}`, "0+10x15"},
	{`vllm:request_success_total{job="vllm", instance="a:8000", model_name="llama", engine="0", finished_reason="abort"}`, "0+100x15"},
	{`vllm:request_success_total{job="vllm", instance="a:8000", model_name="llama", engine="1", finished_reason="stop"}`, "0+1000x15"},
	{`vllm:request_success_total{job="vllm", instance="a:8000", model_name="llama", engine="1", finished_reason="error"}`, "0x15"},
	{`vllm:request_success_total{job="vllm", instance="b:8000", model_name="qwen", finished_reason="stop"}`, "0+100x15"},
}

// TestAvailabilityAgreesWithTheRules evaluates, with promtool on the same
// series, the plugin's availability attainment and error share and the
// shipped recording rule: they give the same number per model (engine
// aborts served, engines summed), and a V0 model gets none from either.
func TestAvailabilityAgreesWithTheRules(t *testing.T) {
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	attainment := b.SLOSignals(vllm.Availability(0.999, "5m"), models.GroupModel, models.Filters{})[0].Expr
	share := b.ErrorShare(b.GroupLabels(models.GroupModel), models.Filters{}, "5m")
	rules, err := os.ReadFile(repoPath(t, sloRulesFile))
	require.NoError(t, err)
	var sb strings.Builder
	sb.WriteString("rule_files: [slo.yml]\nevaluation_interval: 1m\ngroup_eval_order: [vllm.slo.recording, vllm.slo.alerts]\ntests:\n  - interval: 1m\n    input_series:\n")
	for _, s := range availabilitySeries {
		fmt.Fprintf(&sb, "      - series: '%s'\n        values: '%s'\n", s.labels, s.values)
	}
	sb.WriteString("    promql_expr_test:\n")
	for _, e := range []struct {
		expr, labels string
		value        float64
	}{
		{attainment, `{model_name="llama"}`, 0.995},
		{share, `{model_name="llama"}`, 0.005},
		{"1 - model:vllm_availability_slo_errors:ratio_rate5m", `{model_name="llama"}`, 0.995},
	} {
		fmt.Fprintf(&sb, "      - expr: %q\n        eval_time: 10m\n        exp_samples:\n          - labels: '%s'\n            value: %g\n", e.expr, e.labels, e.value)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "slo.yml"), rules, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "availability_test.yml"), []byte(sb.String()), 0o600))
	out, ok := runTool(t, dir, promtool(t), "test", "rules", "availability_test.yml")
	require.True(t, ok, "promtool test rules failed:\n%s\ntest file:\n%s", out, sb.String())
}

// gatewaySeries are an endpoint picker's request counters per minute:
// llama through a dual-emitting picker (legacy and current names, the
// current with its extra labels), 4 of 200 failed; qwen has routed 100
// and failed none, so its error counter does not exist yet.
var gatewaySeries = []struct{ labels, values string }{
	{`inference_objective_request_total{job="epp", model_name="llama", target_model_name="llama"}`, "0+200x15"},
	{`inference_objective_request_error_total{job="epp", model_name="llama", target_model_name="llama", error_code="Unavailable"}`, "0+4x15"},
	{`llm_d_epp_request_total{job="epp", model_name="llama", target_model_name="llama", fairness_id="", priority="0"}`, "0+200x15"},
	{`llm_d_epp_request_error_total{job="epp", model_name="llama", target_model_name="llama", fairness_id="", priority="0", error_code="Unavailable"}`, "0+4x15"},
	{`inference_objective_request_total{job="epp", model_name="qwen", target_model_name="qwen"}`, "0+100x15"},
	{`llm_d_epp_request_total{job="epp", model_name="qwen", target_model_name="qwen", fairness_id="", priority="0"}`, "0+100x15"},
}

// TestGatewayErrorShareCountsOnce evaluates the plugin's gateway error
// share with promtool: a dual-emitting picker counts once (0.02, not
// doubled or halved), and a model with no failure yet shows 0.
func TestGatewayErrorShareCountsOnce(t *testing.T) {
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "pod", Gateway: true}
	var sb strings.Builder
	sb.WriteString("rule_files: [empty.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n")
	for _, s := range gatewaySeries {
		fmt.Fprintf(&sb, "      - series: '%s'\n        values: '%s'\n", s.labels, s.values)
	}
	fmt.Fprintf(&sb, "    promql_expr_test:\n      - expr: %q\n        eval_time: 10m\n        exp_samples:\n", b.GatewayErrorShare(models.GroupModel, models.Filters{}, "5m"))
	sb.WriteString("          - labels: '{model_name=\"llama\"}'\n            value: 0.02\n          - labels: '{model_name=\"qwen\"}'\n            value: 0\n")
	fmt.Fprintf(&sb, "      - expr: %q\n        eval_time: 10m\n        exp_samples:\n", b.GatewayErrorShare(models.GroupNone, models.Filters{}, "5m"))
	sb.WriteString("          - labels: '{}'\n            value: 0.013333333333333332\n") // 4 of 300, in float64
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.yml"), []byte("groups: []\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gateway_test.yml"), []byte(sb.String()), 0o600))
	out, ok := runTool(t, dir, promtool(t), "test", "rules", "gateway_test.yml")
	require.True(t, ok, "promtool test rules failed:\n%s\ntest file:\n%s", out, sb.String())
}
