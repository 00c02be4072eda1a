package deploytest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// agentUpLabels are the target labels of one agent pod's up series as
// prometheus-operator's generated scrape config sets them for a PodMonitor
// (pkg/prometheus/promcfg.go, generatePodMonitorConfig): namespace, pod and
// container from the pod; job "<PodMonitor namespace>/<name>", replaced by
// the value of the pod label jobLabel names when the pod has it; endpoint
// the port name; podTargetLabels copied from the pod. The PodMonitor finds
// pods only in its own namespace unless namespaceSelector says otherwise.
func agentUpLabels(t *testing.T, pm monitoringv1.PodMonitor, ds appsv1.DaemonSet) map[string]string {
	t.Helper()
	ns := pm.Spec.NamespaceSelector
	require.True(t, ns.Any || len(ns.MatchNames) == 0 && pm.Namespace == ds.Namespace || slices.Contains(ns.MatchNames, ds.Namespace),
		"the PodMonitor in %s does not look for pods in the DaemonSet's namespace %s", pm.Namespace, ds.Namespace)
	require.Len(t, pm.Spec.PodMetricsEndpoints, 1)
	ep := pm.Spec.PodMetricsEndpoints[0]
	require.Empty(t, ep.RelabelConfigs, "relabelings change the agents' up labels: model them here")
	podLabels := ds.Spec.Template.Labels
	ls := map[string]string{
		"namespace": ds.Namespace,
		"pod":       ds.Name + "-x7k2p", // a DaemonSet's pods are named after it
		"container": ds.Spec.Template.Spec.Containers[0].Name,
		"job":       pm.Namespace + "/" + pm.Name,
		"instance":  "10.0.0.7:9400",
	}
	if v := podLabels[pm.Spec.JobLabel]; pm.Spec.JobLabel != "" && v != "" {
		ls["job"] = v
	}
	if ep.Port != nil {
		ls["endpoint"] = *ep.Port
	}
	for _, l := range pm.Spec.PodTargetLabels {
		if v, ok := podLabels[l]; ok {
			ls[l] = v
		}
	}
	return ls
}

// selectorMisses lists the matchers of expr's selectors of up that a
// series with the labels ls fails: empty when up{…} selects it.
func selectorMisses(t *testing.T, expr string, ls map[string]string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	require.NoError(t, err, expr)
	var misses []string
	seen := 0
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs.Name != "up" {
			return nil
		}
		seen++
		for _, m := range vs.LabelMatchers {
			if m.Name != "__name__" && !m.Matches(ls[m.Name]) {
				misses = append(misses, fmt.Sprintf("%s (the agents' up has %s=%q)", m, m.Name, ls[m.Name]))
			}
		}
		return nil
	})
	require.Equal(t, 1, seen, "discovery selects up once: %s", expr)
	sort.Strings(misses)
	return misses
}

// discoverySettings parses a provisioned data source's settings as the
// backend does.
func discoverySettings(t *testing.T, d dataSource) models.Settings {
	t.Helper()
	js, err := json.Marshal(d.JSONData)
	require.NoError(t, err)
	s, err := models.ParseSettings(models.Instance{URL: d.URL, JSONData: js})
	require.NoError(t, err)
	return s
}

// TestHelmKubernetesDiscoversTheAgents (issue 36, error 3): the agent
// discovery query the data source of the Kubernetes Helm values builds
// selects the up series that prometheus-operator gives the agents of
// deploy/kubernetes/ (DaemonSet and PodMonitor in monitoring, vLLM in
// inference). Before, discovery inherited the fleet selector
// namespace="inference" and health said "no node agents configured".
func TestHelmKubernetesDiscoversTheAgents(t *testing.T) {
	m := readManifests(t)
	hv := readHelmValues(t, helmKubernetesFile)
	d := vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, helmKubernetesFile)
	up := agentUpLabels(t, m.agentPM, m.daemonSet)
	s := discoverySettings(t, d)
	require.Empty(t, selectorMisses(t, vllm.AgentTargets(s.Agents), up),
		"%s: agent discovery %s misses the agents' up %v", helmKubernetesFile, vllm.AgentTargets(s.Agents), up)
	require.NotEmpty(t, s.Selector, "the values scope the fleet (else this check proves little)")

	// The check fails the mistakes it is for.
	noJobLabel := m.agentPM.DeepCopy()
	noJobLabel.Spec.JobLabel = ""
	withAgentSelector := func(sel string) models.Settings {
		dd := d
		dd.JSONData = map[string]any{}
		for k, v := range d.JSONData {
			dd.JSONData[k] = v
		}
		dd.JSONData["agentSelector"] = sel
		return discoverySettings(t, dd)
	}
	tests := []struct {
		name string
		expr string
		up   map[string]string
		want string
	}{
		{"discovery inside the fleet selector (0.2.0)", vllm.AgentTargets(models.AgentSettings{Job: s.Agents.Job, Selector: s.Selector}), up,
			`namespace="inference" (the agents' up has namespace="monitoring")`},
		{"a PodMonitor without jobLabel", vllm.AgentTargets(s.Agents), agentUpLabels(t, *noJobLabel, m.daemonSet),
			`job="vllm-node-agent" (the agents' up has job="monitoring/vllm-node-agent")`},
		{"an agentSelector on the fleet's namespace", vllm.AgentTargets(withAgentSelector(`namespace="inference"`).Agents), up,
			`namespace="inference"`},
	}
	for _, tt := range tests {
		t.Run("check: "+tt.name, func(t *testing.T) {
			misses := selectorMisses(t, tt.expr, tt.up)
			require.NotEmpty(t, misses, tt.expr)
			require.Contains(t, misses[0], tt.want)
		})
	}
	t.Run("an agentSelector the agents match", func(t *testing.T) {
		require.Empty(t, selectorMisses(t, vllm.AgentTargets(withAgentSelector(`namespace="monitoring", container="vllm-node-agent"`).Agents), up))
	})
}
