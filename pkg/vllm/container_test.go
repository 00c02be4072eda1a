package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestContainerSignals: every expression parses; the kubelet join reads
// app containers only (container not "" nor "POD") and joins on
// namespace, pod and container; the name join reads rows without a pod;
// the mapping rewrites the instance by an anchored, quoted id or name;
// legacy labels are renamed before the join.
func TestContainerSignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	cs := models.ContainerSettings{PodLabel: "pod", ContainerLabel: "container", Map: []models.ContainerMapping{
		{Instance: "10.0.0.1:8000", ID: "/vllm/engine.0"}, {Instance: `a"b:1`, Name: "vllm-x"}}}
	sigs := b.ContainerSignals(models.Filters{Models: []string{"m"}}, "1m", cs)
	names := make([]string, len(sigs))
	for i, s := range sigs {
		names[i] = s.Name
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, "%s: %s", s.Name, s.Expr)
		require.Contains(t, s.Expr, `model_name="m"`, "%s keeps the filters on the vLLM side", s.Name)
	}
	require.Equal(t, []string{"cpu_used", "cpu_limit", "cpu_of_limit", "cpu_throttled", "memory_used", "memory_limit",
		"memory_of_limit", "oom_events", "restarts", "network_receive", "network_transmit", "fs_read", "fs_write"}, names)
	cpu := sigs[0].Expr
	require.Contains(t, cpu, `group by (instance, namespace, pod, container) (vllm:num_requests_running{model_name="m"}) * on (namespace, pod, container) group_left () (sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{pod!="", container!~"|POD"}[1m])))`)
	require.Contains(t, cpu, `sum by (name) (rate(container_cpu_usage_seconds_total{pod="", name!=""}[1m]))`)
	require.Contains(t, cpu, `label_replace(label_replace((sum by (id) (rate(container_cpu_usage_seconds_total{id="/vllm/engine.0"}[1m]))), "instance", "10.0.0.1:8000", "id", "/vllm/engine\\.0"), "container", "$1", "id", "(.*)") * on (instance) group_left () group by (instance) (vllm:num_requests_running{model_name="m"})`)
	require.Contains(t, cpu, `"instance", "a\"b:1", "name", "vllm-x"`)
	require.Contains(t, sigs[5].Expr, `max by (namespace, pod, container) (container_spec_memory_limit_bytes{pod!="", container!~"|POD"} > 0)`, "0 is unlimited: no limit series")
	require.Contains(t, sigs[1].Expr, `container_spec_cpu_quota{pod!="", container!~"|POD"} > 0`, "no quota (-1) is no limit")
	require.Contains(t, sigs[3].Expr, `> 0)`, "throttling divides only by periods that ran")
	require.Contains(t, sigs[3].Expr, `group_left () (sum by (namespace, pod, container) (rate(container_cpu_cfs_throttled_periods_total`,
		"the ratio is one operand of the join: unparenthesised, its / would bind to the join's * and match on the vLLM side's labels")
	require.Contains(t, sigs[9].Expr, `sum by (namespace, pod) (max by (namespace, pod, interface) (rate(container_network_receive_bytes_total{pod!=""}[1m])))`,
		"the pod's network counted once though its pod and pause rows both report it")
	require.NotContains(t, sigs[8].Expr, "container_cpu", "restarts are kube-state-metrics'")
	for _, i := range []int{1, 2, 5, 6} {
		require.Contains(t, sigs[i].Expr, `or group by (instance, namespace, pod, container) (vllm:num_requests_running{model_name="m"}) * on (namespace, pod, container) group_left () (`,
			"%s: kube-state-metrics' limit, last, where cAdvisor's container_spec_* are dropped", sigs[i].Name)
		require.Contains(t, sigs[i].Expr, `kube_pod_container_resource_limits{resource="`, sigs[i].Name)
	}
	require.NotContains(t, sigs[0].Expr, "kube_pod_container_resource_limits", "usage is cAdvisor's only")

	legacy := b.ContainerSignals(models.Filters{}, "1m", models.ContainerSettings{PodLabel: "pod_name", ContainerLabel: "container_name"})
	require.Contains(t, legacy[0].Expr, `label_replace(label_replace((sum by (namespace, pod_name, container_name) (rate(container_cpu_usage_seconds_total{pod_name!="", container_name!~"|POD"}[1m]))), "pod", "$1", "pod_name", "(.*)"), "container", "$1", "container_name", "(.*)")`)
	require.Len(t, strings.Split(legacy[0].Expr, " or "), 2, "no map, no map join")
	_, err := parser.NewParser(parser.Options{}).ParseExpr(b.ContainerProbe())
	require.NoError(t, err)
}

// TestContainerLimitsFromKubeStateMetricsReadTheKubeletsLabels: the
// cAdvisor side of a kube-state-metrics limit ratio reads the pod and
// container labels the settings name (legacy kubelets' pod_name and
// container_name), and settings that name none read pod and container.
func TestContainerLimitsFromKubeStateMetricsReadTheKubeletsLabels(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		name      string
		cs        models.ContainerSettings
		selection string
	}{
		{"legacy kubelet labels", models.ContainerSettings{PodLabel: "pod_name", ContainerLabel: "container_name"},
			`{pod_name!="", container_name!~"|POD"}`},
		{"no labels set: the defaults", models.ContainerSettings{}, `{pod!="", container!~"|POD"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, sig := range []string{ContainerCPUOfLimit, ContainerMemoryOfLimit} {
				e := b.ksmLimit(sig, models.Filters{}, "1m", tt.cs)
				_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
				require.NoError(t, err, "%s: %s", sig, e)
				require.Contains(t, e, tt.selection, sig)
			}
		})
	}
}

// TestContainerWorstByReadsTheNamedSignal: the worst container of a group
// is taken over the signal asked for, and an unknown signal has no
// expression to join.
func TestContainerWorstByReadsTheNamedSignal(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	cs := models.DefaultContainerSettings()
	tests := []struct {
		signal, reads, notReads string
	}{
		{ContainerMemoryOfLimit, "container_memory_working_set_bytes", "container_cpu_usage_seconds_total"},
		{ContainerCPUThrottled, "container_cpu_cfs_throttled_periods_total", "container_memory_working_set_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.signal, func(t *testing.T) {
			e := b.ContainerWorstBy(tt.signal, []string{"model_name"}, models.Filters{}, "1m", cs)
			require.Contains(t, e, tt.reads)
			require.NotContains(t, e, tt.notReads)
		})
	}
	require.Empty(t, b.containerSignal("no_such_signal", models.Filters{}, "1m", cs))
}
