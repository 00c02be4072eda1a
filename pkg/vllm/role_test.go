package vllm

import (
	"testing"

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
	s := b.FleetRoleSignal(models.Filters{Models: nastyValues})
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
