package vllm

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// ContainerLabel is the label the container query's series name their
// container by: the Kubernetes container name, or the standalone
// container's name or cgroup path (id).
const ContainerLabel = "container"

// The container query's signals (cAdvisor and kube-state-metrics).
const (
	ContainerCPUUsed        = "cpu_used"
	ContainerCPULimit       = "cpu_limit"
	ContainerCPUOfLimit     = "cpu_of_limit"
	ContainerCPUThrottled   = "cpu_throttled"
	ContainerMemoryUsed     = "memory_used"
	ContainerMemoryLimit    = "memory_limit"
	ContainerMemoryOfLimit  = "memory_of_limit"
	ContainerOOMEvents      = "oom_events"
	ContainerRestarts       = "restarts"
	ContainerNetReceive     = "network_receive"
	ContainerNetTransmit    = "network_transmit"
	ContainerFSRead         = "fs_read"
	ContainerFSWrite        = "fs_write"
	cadvisorWorkingSet      = "container_memory_working_set_bytes"
	ksmRestarts             = "kube_pod_container_status_restarts_total"
	containerNetworkPrefix  = "container_network_"
	containerSignalsPerPod  = "network"
	containerJoinNamespace  = "namespace"
	containerJoinPod        = "pod"
	containerStandaloneName = "name"
)

// perContainer renders one signal over cAdvisor rows: sel(metric) is the
// metric's selector in the join's shape, j the labels it is summed by.
type perContainer func(sel func(metric string) string, j []string, w string) string

// containerSignals are cAdvisor's families as the container query reads
// them, in the order the series are listed. Gauges take max over rows (a
// restarting container has two rows for a moment: old and new), counters
// sum rates. A limit of 0 (cAdvisor's "unlimited") and a CFS quota of -1
// are dropped by "> 0", so a container without a limit has no limit and
// no share-of-limit series: never a division by zero.
var containerSignals = []struct {
	name string
	expr perContainer
}{
	{ContainerCPUUsed, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, rateOf(s("container_cpu_usage_seconds_total"), w))
	}},
	{ContainerCPULimit, cpuLimit},
	{ContainerCPUOfLimit, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, rateOf(s("container_cpu_usage_seconds_total"), w)) + " / " + cpuLimit(s, j, w)
	}},
	{ContainerCPUThrottled, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, rateOf(s("container_cpu_cfs_throttled_periods_total"), w)) + " / (" +
			agg("sum", j, rateOf(s("container_cpu_cfs_periods_total"), w)) + " > 0)"
	}},
	{ContainerMemoryUsed, func(s func(string) string, j []string, _ string) string { return agg("max", j, s(cadvisorWorkingSet)) }},
	{ContainerMemoryLimit, memLimit},
	{ContainerMemoryOfLimit, func(s func(string) string, j []string, w string) string {
		return agg("max", j, s(cadvisorWorkingSet)) + " / " + memLimit(s, j, w)
	}},
	{ContainerOOMEvents, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, fmt.Sprintf("increase(%s[%s])", s("container_oom_events_total"), w))
	}},
	{ContainerNetReceive, netRate("receive")},
	{ContainerNetTransmit, netRate("transmit")},
	{ContainerFSRead, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, rateOf(s("container_fs_reads_bytes_total"), w))
	}},
	{ContainerFSWrite, func(s func(string) string, j []string, w string) string {
		return agg("sum", j, rateOf(s("container_fs_writes_bytes_total"), w))
	}},
}

func rateOf(sel, w string) string { return fmt.Sprintf("rate(%s[%s])", sel, w) }

// cpuLimit is quota ÷ period in cores, for containers with a quota.
func cpuLimit(s func(string) string, j []string, _ string) string {
	return "(" + agg("max", j, s("container_spec_cpu_quota")+" > 0") + " / " + agg("max", j, s("container_spec_cpu_period")) + ")"
}

// memLimit is the memory limit in bytes, for containers with one.
func memLimit(s func(string) string, j []string, _ string) string {
	return "(" + agg("max", j, s("container_spec_memory_limit_bytes")+" > 0") + ")"
}

// netRate is a network family's bytes/s. A pod's containers share one
// network namespace, which the kubelet reports on the pod's own row and
// again on its pause row (and some runtimes on every container): the max
// per interface counts it once, then interfaces are summed.
func netRate(dir string) perContainer {
	return func(s func(string) string, j []string, w string) string {
		per := agg("max", append(append([]string(nil), j...), "interface"), rateOf(s(containerNetworkPrefix+dir+"_bytes_total"), w))
		return agg("sum", j, per)
	}
}

// ContainerProbe counts cAdvisor's working-set series inside the scope:
// zero means no cAdvisor (kubelet or standalone) is scraped.
func (b Builder) ContainerProbe() string {
	return "count(" + b.ScopedSelector(cadvisorWorkingSet) + ")"
}

// ContainerSignals are the container query's expressions: per vLLM server
// and container, each cAdvisor signal joined to the servers under the
// filters. Three joins are or-unioned (see containerJoins); restarts come
// from kube-state-metrics and join on Kubernetes only.
func (b Builder) ContainerSignals(f models.Filters, window string, cs models.ContainerSettings) []SignalExpr {
	joins := b.containerJoins(f, cs)
	out := make([]SignalExpr, 0, len(containerSignals)+1)
	for _, sig := range containerSignals {
		parts := make([]string, 0, len(joins))
		for _, j := range joins {
			if e := j.render(sig.name, sig.expr, window); e != "" {
				parts = append(parts, e)
			}
		}
		if k := b.ksmLimit(sig.name, f, window, cs); k != "" {
			parts = append(parts, k)
		}
		out = append(out, SignalExpr{Name: sig.name, Expr: strings.Join(parts, " or ")})
		if sig.name == ContainerOOMEvents {
			out = append(out, SignalExpr{Name: ContainerRestarts, Expr: b.containerRestarts(f, window)})
		}
	}
	return out
}

// containerRestarts is kube-state-metrics' restart count over the window,
// per vLLM server and container (its labels are always namespace, pod,
// container, whatever the kubelet writes).
func (b Builder) containerRestarts(f models.Filters, window string) string {
	j := []string{containerJoinNamespace, containerJoinPod, ContainerLabel}
	ksm := agg("sum", j, fmt.Sprintf("increase(%s[%s])", b.ScopedSelector(ksmRestarts, `container!=""`), window))
	return b.vllmSide(f, j) + " * on (" + strings.Join(j, ", ") + ") group_left () " + ksm
}

// ksmResources are the kube-state-metrics resources of the limit signals.
var ksmResources = map[string]string{ContainerCPULimit: "cpu", ContainerCPUOfLimit: "cpu",
	ContainerMemoryLimit: "memory", ContainerMemoryOfLimit: "memory"}

// ksmLimit is a limit signal from kube-state-metrics'
// kube_pod_container_resource_limits (cores, bytes) where cAdvisor's own
// container_spec_* series are missing: kube-prometheus-stack drops them
// by default ("overlap with kube-state-metrics"). Joined like the kubelet's
// rows; "or" keeps cAdvisor's where both exist (their label sets are the
// servers' own, so the first wins). "" for the other signals.
func (b Builder) ksmLimit(name string, f models.Filters, window string, cs models.ContainerSettings) string {
	res, ok := ksmResources[name]
	if !ok {
		return ""
	}
	if cs.PodLabel == "" {
		cs = models.DefaultContainerSettings()
	}
	j := []string{containerJoinNamespace, containerJoinPod, ContainerLabel}
	limit := agg("max", j, b.ScopedSelector("kube_pod_container_resource_limits", `resource="`+res+`"`, `container!=""`)+" > 0")
	app := func(metric string) string {
		return selector(metric, strings.Join(append(b.scope(), cs.PodLabel+`!=""`, cs.ContainerLabel+`!~"|POD"`), ", "))
	}
	by := []string{containerJoinNamespace, cs.PodLabel, cs.ContainerLabel}
	x := limit
	switch name {
	case ContainerCPUOfLimit:
		x = kubeletNames(agg("sum", by, rateOf(app("container_cpu_usage_seconds_total"), window)), cs) + " / " + limit
	case ContainerMemoryOfLimit:
		x = kubeletNames(agg("max", by, app(cadvisorWorkingSet)), cs) + " / " + limit
	}
	return b.vllmSide(f, j) + " * on (" + strings.Join(j, ", ") + ") group_left () (" + x + ")"
}

// kubeletNames renames legacy kubelet labels (pod_name, container_name) to
// pod and container, the names the vLLM series and kube-state-metrics use.
func kubeletNames(x string, cs models.ContainerSettings) string {
	for _, r := range [][2]string{{cs.PodLabel, containerJoinPod}, {cs.ContainerLabel, ContainerLabel}} {
		if r[0] != r[1] {
			x = fmt.Sprintf("label_replace(%s, %q, \"$1\", %q, \"(.*)\")", x, r[1], r[0])
		}
	}
	return x
}

// vllmSide groups the selected engines by their identity labels and the
// join labels: one series per server, value 1.
func (b Builder) vllmSide(f models.Filters, join []string) string {
	return agg("group", dedupe(append(append([]string(nil), b.IdentityLabels()...), join...)), b.EngineSelector(f))
}

func dedupe(ls []string) []string {
	seen := map[string]bool{}
	out := ls[:0]
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// containerJoin is one way cAdvisor rows meet vLLM servers: a shape for
// per-container signals and one for pod-level ones (network).
type containerJoin struct{ container, pod rowShape }

// rowShape is which cAdvisor rows a signal reads, the labels it sums them
// by, and how the per-container result is joined to the servers.
type rowShape struct {
	matchers []string
	by       []string
	wrap     func(perContainer string) string
}

func (j containerJoin) render(name string, expr perContainer, w string) string {
	shape := j.container
	if strings.HasPrefix(name, containerSignalsPerPod) {
		shape = j.pod
	}
	sel := func(metric string) string { return selector(metric, strings.Join(shape.matchers, ", ")) }
	// Parenthesised: a ratio's "/" must not bind to the join's "*".
	return shape.wrap("(" + expr(sel, shape.by, w) + ")")
}

// containerJoins are the joins of the data source: the kubelet's
// (namespace, pod and container on both sides), standalone cAdvisor's by
// container name (the host part of the instance label, as Docker's DNS
// names a container), and the data source's containerMap, where it has
// entries. They read disjoint cAdvisor rows (with a pod label, without
// one, or the mapped ones), so "or" never adds a server twice.
func (b Builder) containerJoins(f models.Filters, cs models.ContainerSettings) []containerJoin {
	if cs.PodLabel == "" {
		cs = models.DefaultContainerSettings()
	}
	out := []containerJoin{b.kubeletJoin(f, cs), b.nameJoin(f, cs)}
	var ids, names []models.ContainerMapping
	for _, m := range cs.Map {
		if m.ID != "" {
			ids = append(ids, m)
		} else {
			names = append(names, m)
		}
	}
	if len(ids) > 0 {
		out = append(out, b.mapJoin(f, "id", ids))
	}
	if len(names) > 0 {
		out = append(out, b.mapJoin(f, containerStandaloneName, names))
	}
	return out
}

// kubeletJoin: app containers only. The pod's own cgroup row has an empty
// container label (and so has containerd's pause row, told apart only by
// its image), docker's pause row is container="POD": both are left out,
// or a pod would count twice. Network is pod-level: every row of the pod.
func (b Builder) kubeletJoin(f models.Filters, cs models.ContainerSettings) containerJoin {
	pl, cl := cs.PodLabel, cs.ContainerLabel
	cj := []string{containerJoinNamespace, containerJoinPod, ContainerLabel}
	pj := []string{containerJoinNamespace, containerJoinPod}
	return containerJoin{
		container: rowShape{matchers: append(b.scope(), pl+`!=""`, cl+`!~"|POD"`), by: []string{containerJoinNamespace, pl, cl},
			wrap: func(x string) string {
				return b.vllmSide(f, cj) + " * on (" + strings.Join(cj, ", ") + ") group_left () " + kubeletNames(x, cs)
			}},
		pod: rowShape{matchers: append(b.scope(), pl+`!=""`), by: []string{containerJoinNamespace, pl},
			wrap: func(x string) string {
				return b.vllmSide(f, pj) + " * on (" + strings.Join(pj, ", ") + ") group_left () " + kubeletNames(x, models.ContainerSettings{PodLabel: pl, ContainerLabel: ContainerLabel})
			}},
	}
}

// nameJoin: standalone cAdvisor (no pod label) names Docker containers by
// name; a server whose instance host is that name is its container.
func (b Builder) nameJoin(f models.Filters, cs models.ContainerSettings) containerJoin {
	n := containerStandaloneName
	servers := agg("group", dedupe(append(append([]string(nil), b.IdentityLabels()...), n)),
		fmt.Sprintf("label_replace(%s, %q, \"$1\", %q, %q)", b.EngineSelector(f), n, b.InstanceLabel, hostRegex))
	shape := rowShape{matchers: append(b.scope(), cs.PodLabel+`=""`, n+`!=""`), by: []string{n},
		wrap: func(x string) string {
			return fmt.Sprintf("label_replace(%s * on (%s) group_left () %s, %q, \"$1\", %q, \"(.*)\")", servers, n, x, ContainerLabel, n)
		}}
	return containerJoin{container: shape, pod: shape}
}

// mapJoin: the data source's containerMap, by cAdvisor's id (a cgroup
// path: raw cgroups carry nothing else) or name. Each mapped row gets its
// server's instance label by an anchored label_replace, then keeps only
// the servers the filters select.
func (b Builder) mapJoin(f models.Filters, key string, entries []models.ContainerMapping) containerJoin {
	values := make([]string, len(entries))
	for i, e := range entries {
		_, values[i] = e.Key()
	}
	sort.Strings(values)
	il := b.InstanceLabel
	servers := agg("group", []string{il}, b.EngineSelector(f))
	shape := rowShape{matchers: append(b.scope(), matchAny(key, values)), by: []string{key},
		wrap: func(x string) string {
			for _, e := range entries {
				_, v := e.Key()
				x = fmt.Sprintf("label_replace(%s, %q, %q, %q, %q)", x, il, e.Instance, key, regexp.QuoteMeta(v))
			}
			x = fmt.Sprintf("label_replace(%s, %q, \"$1\", %q, \"(.*)\")", x, ContainerLabel, key)
			return x + " * on (" + il + ") group_left () " + servers
		}}
	return containerJoin{container: shape, pod: shape}
}

// containerSignal is one container signal's expression (all joins).
func (b Builder) containerSignal(name string, f models.Filters, window string, cs models.ContainerSettings) string {
	for _, s := range b.ContainerSignals(f, window, cs) {
		if s.Name == name {
			return s.Expr
		}
	}
	return ""
}

// ContainerWorstBy is a container signal (ContainerCPUThrottled,
// ContainerMemoryOfLimit) for vLLM series grouped by gl: each server's
// worst container, then the worst server of each group. Servers are
// joined by their identity labels, so any grouping of the vLLM series
// (instance, engine, model, role) gets its servers' containers; where
// cAdvisor is not scraped the answer is empty.
func (b Builder) ContainerWorstBy(signal string, gl []string, f models.Filters, window string, cs models.ContainerSettings) string {
	id := b.IdentityLabels()
	perServer := agg("max", id, b.containerSignal(signal, f, window, cs))
	servers := agg("group", dedupe(append(append([]string(nil), gl...), id...)), b.EngineSelector(f))
	return agg("max", gl, servers+" * on ("+strings.Join(id, ", ")+") group_left () "+perServer)
}
