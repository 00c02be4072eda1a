package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
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

// TestStalledStateFromRules: the fleet table's stall column on the
// recorded state is one selector of the state's name under the filters,
// kept above 0 and grouped by the engine labels; no plan for a window the
// group does not record, nor under a scope on a label up never carries.
func TestStalledStateFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	f := models.Filters{Models: []string{"m"}}
	for _, w := range RuleStallWindows {
		rp, ok := b.StalledStateFromRules("engine:", f, w)
		require.True(t, ok, w)
		name := "engine:vllm_stalled:" + ShortDuration(w)
		require.Equal(t, []string{name}, rp.Names)
		require.Contains(t, RuleNames("engine:"), name, "a name the rule file records")
		require.Equal(t, `max by (instance, engine, model_name) (`+name+`{model_name="m"} > 0)`, rp.Expr)
		_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
		require.NoError(t, err)
	}
	_, ok := b.StalledStateFromRules("engine:", f, 2*time.Minute)
	require.False(t, ok, "2m is not recorded")
	for _, l := range []string{"model_name", "engine"} {
		scoped := b
		scoped.Scope = []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, l, "x")}
		_, ok := scoped.StalledStateFromRules("engine:", f, 3*time.Minute)
		require.False(t, ok, "a scope on %s selects no up series raw", l)
	}
	scoped := b
	scoped.Scope = []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}
	rp, ok := scoped.StalledStateFromRules("engine:", f, 3*time.Minute)
	require.True(t, ok)
	require.Contains(t, rp.Expr, `engine:vllm_stalled:3m{cluster="a", model_name="m"}`)
}

// TestStallStateShared: the check counts, per identity of the table, the
// rule's servers among the recorded state's engines and the up series in
// scope (pod-labelled by cluster, namespace and pod; the others by
// cluster, namespace and instance), each grouping label once.
func TestStallStateShared(t *testing.T) {
	tests := []struct {
		name string
		b    Builder
		want string
	}{
		{"by instance", Builder{Prefix: "vllm:", InstanceLabel: "instance"},
			`count(count by (instance) (group by (instance, cluster, namespace, pod) ({__name__=~"up|engine:vllm_stalled:3m", pod!=""}) or ` +
				`group by (instance, cluster, namespace) ({__name__=~"up|engine:vllm_stalled:3m", pod=""})) > 1)`},
		{"by namespace and pod, scoped", Builder{Prefix: "vllm:", InstanceLabel: "pod", Identity: []string{"namespace", "pod"},
			Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}},
			`count(count by (namespace, pod) (group by (namespace, pod, cluster) ({__name__=~"up|engine:vllm_stalled:3m", pod!="", cluster="a"}) or ` +
				`group by (namespace, pod, cluster, instance) ({__name__=~"up|engine:vllm_stalled:3m", pod="", cluster="a"})) > 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.StallStateShared("engine:", 3*time.Minute)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}
