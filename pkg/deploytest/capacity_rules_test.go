package deploytest

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

const (
	capacityRulesFile     = "deploy/prometheus/rules/vllm-capacity.rules.yml"
	capacityRulesTestFile = "deploy/prometheus/rules/vllm-capacity.rules.test.yml"
)

// kedaScaledObject is the part of KEDA's keda.sh/v1alpha1 ScaledObject the
// shipped example uses (github.com/kedacore/keda apis/keda/v1alpha1), so a
// misspelt field fails strict decoding as it would fail KEDA's webhook.
type kedaScaledObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		CooldownPeriod  *int32 `json:"cooldownPeriod"`
		Triggers        []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// TestCapacityRules: the autoscaler rule file parses, the demo config loads
// it through its rule_files glob, and its unit tests pass (demand with a
// growing queue, capacity from saturated servers only, desired replicas
// with the headroom and the queue's drain, a never-saturated model without
// a count).
func TestCapacityRules(t *testing.T) {
	bin := promtool(t)
	out, ok := runTool(t, repoRoot(t), bin, "check", "rules", capacityRulesFile)
	require.True(t, ok, "promtool check rules %s failed:\n%s", capacityRulesFile, out)
	out, ok = runTool(t, promConfigDir(t), bin, "check", "config", "prometheus.yml")
	require.True(t, ok, out)
	require.Contains(t, out, "Checking rules/vllm-capacity.rules.yml")
	out, ok = runTool(t, repoRoot(t), bin, "test", "rules", capacityRulesTestFile)
	require.True(t, ok, "promtool test rules %s failed:\n%s", capacityRulesTestFile, out)
	require.Contains(t, out, "SUCCESS", out)
}

// TestCapacityRulesAreTheQuerysClosedForm: the rule's constants are the
// capacity query's defaults (a 5m drain, 20% headroom), and the query's
// closed form gives the counts the promtool tests expect from the same
// inputs, so an autoscaler on the rule and a panel on the query agree.
func TestCapacityRulesAreTheQuerysClosedForm(t *testing.T) {
	raw, err := os.ReadFile(repoPath(t, capacityRulesFile))
	require.NoError(t, err)
	expr := regexp.MustCompile(`(?s)record: model:vllm_desired_replicas:ceil\s+expr: \|(.*?)(\n\s*- record|\z)`).FindStringSubmatch(string(raw))
	require.NotNil(t, expr, "the desired-replicas rule")
	require.Contains(t, expr[1], "(vllm:num_requests_waiting) / 300)", "drain: the query's default 5m")
	require.Contains(t, expr[1], "* 1.2", "headroom: the query's default 0.2")
	tests := []struct {
		name                          string
		arrivals, waiting, perReplica float64
		want                          int
	}{
		{"llama at 15m", 2.5, 4, 1, 4},
		{"qwen at 15m", 2.1, 55, 2, 2},
		{"qwen at 20m", 2.1, 85, 2, 2},
		{"without the queue, exactly 3", 2.5, 0, 1, 3},
	}
	for _, tt := range tests {
		got := vllm.DesiredReplicas(tt.arrivals, tt.waiting, tt.perReplica, 0.2, 5*time.Minute)
		require.Equal(t, tt.want, got, tt.name)
	}
}

// TestAutoscalersReadTheRule: the KEDA ScaledObject and the HPA target a
// Deployment and ask for the rule's count itself (threshold / averageValue
// 1), KEDA's query names the recorded series, and both scale down slowly
// enough for a replica's start.
func TestAutoscalersReadTheRule(t *testing.T) {
	m := readManifests(t)
	so := m.scaledObject
	require.Len(t, so.Spec.Triggers, 1)
	tr := so.Spec.Triggers[0]
	require.Equal(t, "prometheus", tr.Type)
	require.True(t, strings.HasPrefix(tr.Metadata["query"], "max(model:vllm_desired_replicas:ceil{"), tr.Metadata["query"])
	require.Equal(t, "1", tr.Metadata["threshold"])
	require.NotEmpty(t, tr.Metadata["serverAddress"])
	require.NotEmpty(t, so.Spec.ScaleTargetRef.Name)
	require.GreaterOrEqual(t, *so.Spec.CooldownPeriod, int32(300))
	rules, err := os.ReadFile(repoPath(t, capacityRulesFile))
	require.NoError(t, err)
	require.Contains(t, string(rules), "- record: model:vllm_desired_replicas:ceil")

	h := m.hpa
	require.Equal(t, "Deployment", h.Spec.ScaleTargetRef.Kind)
	require.Len(t, h.Spec.Metrics, 1)
	ext := h.Spec.Metrics[0].External
	require.NotNil(t, ext)
	require.Equal(t, "1", ext.Target.AverageValue.String())
	require.Nil(t, ext.Metric.Selector, "a label selector cannot hold a model name's '/'")
	raw, err := os.ReadFile(repoPath(t, "deploy/kubernetes/autoscaling/vllm-hpa.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(raw), "name: {as: "+ext.Metric.Name+"}", "the adapter rule in the comment serves the metric")
	require.GreaterOrEqual(t, *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds, int32(300))
}
