package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestRoleLabels(t *testing.T) {
	tests := []struct {
		name      string
		roleLabel string
		series    map[string]string
		labels    []string
		role      string
	}{
		{"KServe", "", map[string]string{"llm_isvc_role": "prefill", "instance": "a"}, []string{"llm_isvc_role", "llm_d_ai_role"}, "prefill"},
		{"llm-d pod label as scraped", "", map[string]string{"llm_d_ai_role": "decode"}, []string{"llm_isvc_role", "llm_d_ai_role"}, "decode"},
		{"KServe's label first", "", map[string]string{"llm_isvc_role": "prefill", "llm_d_ai_role": "decode"}, []string{"llm_isvc_role", "llm_d_ai_role"}, "prefill"},
		{"none", "", map[string]string{"instance": "a"}, []string{"llm_isvc_role", "llm_d_ai_role"}, ""},
		{"setting overrides", "pd_role", map[string]string{"pd_role": "decode", "llm_isvc_role": "prefill"}, []string{"pd_role"}, "decode"},
		{"setting ignores the known labels", "pd_role", map[string]string{"llm_isvc_role": "prefill"}, []string{"pd_role"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ForSettings(models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", RoleLabel: tt.roleLabel})
			require.Equal(t, tt.labels, b.RoleLabels())
			require.Equal(t, tt.labels, b.GroupLabels(models.GroupRole))
			require.Equal(t, tt.role, b.RoleOf(tt.series))
		})
	}
}

func TestRoleLabelsAreACopy(t *testing.T) {
	b := Builder{}
	b.RoleLabels()[0] = "x"
	require.Equal(t, "llm_isvc_role", KnownRoleLabels[0])
}

func TestNoRoleText(t *testing.T) {
	require.Contains(t, Builder{}.NoRoleText(), "no role label on the series: looked for llm_isvc_role, llm_d_ai_role")
	require.Contains(t, Builder{}.NoRoleText(), "set roleLabel")
	require.Contains(t, Builder{RoleLabel: "pd"}.NoRoleText(), "looked for pd,")
}

func TestFleetRoleSignal(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	s, ok := b.FleetRoleSignal(models.Filters{Models: nastyValues})
	require.True(t, ok, "not probed: asked for")
	require.Equal(t, FleetRole, s.Name)
	vss := allSelectors(t, s.Expr)
	require.Len(t, vss, 1)
	requireMatchesExactly(t, vss[0], "model_name", nastyValues)
	require.Contains(t, s.Expr, "group by (instance, engine, model_name, llm_isvc_role, llm_d_ai_role) (")
}

// TestRoleGroupingSkipsRecordingRules: the recorded sums have no role
// label, so a role grouping never plans on them.
func TestRoleGroupingSkipsRecordingRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	for _, g := range []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupRole} {
		_, queueOK := b.QueueSignalFromRules("engine:", "running", g, models.Filters{})
		_, waitOK := b.WaitTimeFromRules("engine:", "queue_time", []float64{0.5}, false, g, models.Filters{}, "1m", RecordedWait{})
		require.Equal(t, g != models.GroupRole, queueOK, "queue %s", g)
		if g == models.GroupRole {
			require.False(t, waitOK, "waitTime %s", g)
		}
	}
}

// TestFleetRoleSignalFollowsTheProbe: the role column is left out only
// where the probe answered and found no role label; unprobed, or with a
// role found, it is asked for.
func TestFleetRoleSignalFollowsTheProbe(t *testing.T) {
	tests := []struct {
		name  string
		roles RoleLabelsFound
		want  bool
	}{
		{"not probed", RoleLabelsFound{}, true},
		{"probed, found", RoleLabelsFound{Probed: true, Found: true}, true},
		{"probed, none", RoleLabelsFound{Probed: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: Detection{Roles: tt.roles}}
			_, ok := b.FleetRoleSignal(models.Filters{})
			require.Equal(t, tt.want, ok)
		})
	}
	require.Equal(t, RoleLabelsFound{Probed: true, Found: true}, Detection{}.WithRoles(true).Roles)
	require.Equal(t, RoleLabelsFound{Probed: true}, Detection{}.WithRoles(false).Roles)
}

// TestRoleProbeSelectors: one selector per role label, on the running
// gauge under every prefix, inside the scope; none where a role label
// comes from target_info.
func TestRoleProbeSelectors(t *testing.T) {
	scope := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}
	b := Builder{Prefix: "vllm:", Prefixes: []string{"kserve_vllm:", "vllm:"}, InstanceLabel: "instance", Scope: scope}
	sels, ok := b.RoleProbeSelectors()
	require.True(t, ok)
	require.Equal(t, []string{
		`{__name__=~"kserve_vllm:num_requests_running|vllm:num_requests_running", llm_isvc_role!="", cluster="a"}`,
		`{__name__=~"kserve_vllm:num_requests_running|vllm:num_requests_running", llm_d_ai_role!="", cluster="a"}`,
	}, sels)
	for _, s := range sels {
		_, ok := parse(t, s).(*parser.VectorSelector)
		require.True(t, ok, s)
	}
	b.RoleLabel = "pd"
	sels, ok = b.RoleProbeSelectors()
	require.True(t, ok)
	require.Len(t, sels, 1)
	require.Contains(t, sels[0], `pd!=""`)
	b.Detected.Join = ResourceJoin{From: map[string]string{"pd": "pd"}}
	_, ok = b.RoleProbeSelectors()
	require.False(t, ok, "a role label from target_info is never on the series")
}
