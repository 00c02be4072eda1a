package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestStalledSeenFromRules: the stall condition on rules is the raw one
// with each per-series input (min_over_time of the gauges, increase of the
// counters) replaced by its recorded series, and nothing else changed; a
// window the stall group does not record has no plan.
func TestStalledSeenFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	f := models.Filters{Models: []string{"m"}}
	for _, w := range RuleStallWindows {
		for _, gl := range [][]string{b.EngineLabels(), {"model_name"}, b.IdentityLabels()} {
			rp, ok := b.StalledSeenFromRules("engine:", gl, f, w)
			require.True(t, ok, w)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
			require.NoError(t, err)
			require.Len(t, rp.Names, 5)
			back := rp.Expr
			for _, p := range b.StallInputPairs("engine:", gl, f, w) {
				require.Contains(t, rp.Names, p.Name)
				require.Contains(t, RuleNames("engine:"), p.Name, "a name the rule file records")
				back = strings.Replace(back, p.Rules, p.Raw, 1)
			}
			require.Equal(t, b.StalledSeen(gl, f, w), back, "only the inputs differ")
		}
	}
	_, ok := b.StalledSeenFromRules("engine:", b.EngineLabels(), f, 2*time.Minute)
	require.False(t, ok, "2m is not recorded")
	require.Empty(t, b.StallInputPairs("engine:", b.EngineLabels(), f, 2*time.Minute))
}

// TestFleetP99FromRules: the p99 columns read each engine's recorded
// quantile by the table's engine labels, and the shared-labels probe
// counts engine-label sets holding more than one.
func TestFleetP99FromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "pod"}
	f := models.Filters{Models: []string{"m"}}
	got := b.FleetP99FromRules("engine:", f, "5m")
	require.Equal(t, `max by (pod, engine, model_name) (engine:vllm_request_queue_time_seconds:p99_rate5m{model_name="m"})`, got[FleetQueueP99].Expr)
	require.Equal(t, `max by (pod, engine, model_name) (engine:vllm_time_to_first_token_seconds:p99_rate5m{model_name="m"})`, got[FleetTTFTP99].Expr)
	for _, rp := range got {
		require.Contains(t, RuleNames("engine:"), rp.Names[0])
	}
	require.Nil(t, b.FleetP99FromRules("engine:", f, "2m"), "no recorded window")
	require.Equal(t, `count(count by (pod, engine, model_name) (engine:x{model_name="m"}) > 1)`, b.FleetP99Shared("engine:x", f))
}

// TestRuleGroups: the groups partition the recorded names, in the rule
// file's order, and a missing name's notice names its group.
func TestRuleGroups(t *testing.T) {
	gs := RuleGroups("engine:")
	var names []string
	var order []string
	for _, g := range gs {
		names = append(names, g.Names...)
		order = append(order, g.Name)
		require.NotEmpty(t, g.Panels)
	}
	require.ElementsMatch(t, RuleNames("engine:"), names)
	require.Equal(t, []string{"vllm.recording.latency.rate1m", "vllm.recording.latency.rate5m", "vllm.recording.load",
		"vllm.recording.stall", "vllm.recording.engine_p99", "vllm.recording.wait_quantiles", "vllm.recording.slo"}, order)
	g, ok := RuleGroupOf("engine:", "engine:vllm_prompt_tokens:increase3m")
	require.True(t, ok)
	require.Equal(t, "vllm.recording.stall", g.Name)
	_, ok = RuleGroupOf("engine:", "engine:nothing")
	require.False(t, ok)
	require.Equal(t, "The fleet table's stall state read raw series: the recording rule group vllm.recording.stall is missing or partly "+
		"loaded (no series for engine:vllm_prompt_tokens:increase3m). Load all of deploy/prometheus/rules/vllm-recording.rules.yml; "+
		"Save & test lists the groups found.",
		RulesMissingNotice("engine:", "fleet table's stall state", []string{"engine:vllm_prompt_tokens:increase3m"}))
}

// TestStalledSeenFromRulesNamesWhatTheFleetExports: a recorded input whose
// raw counter the fleet does not export (no prompt-token counter here) is
// still read, but not required: both sides are empty for it.
func TestStalledSeenFromRulesNamesWhatTheFleetExports(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: Detect([]string{"vllm:num_requests_running",
		"vllm:num_requests_waiting", "vllm:generation_tokens_total", "vllm:request_success_total"}, "vllm:")}
	rp, ok := b.StalledSeenFromRules("engine:", b.EngineLabels(), models.Filters{}, 3*time.Minute)
	require.True(t, ok)
	require.Len(t, rp.Names, 4)
	require.NotContains(t, rp.Names, "engine:vllm_prompt_tokens:increase3m")
	require.Contains(t, rp.Expr, "engine:vllm_prompt_tokens:increase3m", "still read")
	require.Equal(t, "engine:vllm_num_requests_running:min_over_time3m", rp.Names[0], "the coverage probe's name")
}
