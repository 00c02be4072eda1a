package vllm

import (
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func strconvFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// DCGMReading is one reading of NVIDIA dcgm-exporter's default counters
// (etc/default-counters.csv): the exported name and the factor to the
// unit frames use (MiB to bytes, MHz to Hz).
type DCGMReading struct {
	Key, Metric string
	Scale       float64
}

// DCGM readings by key. The framebuffer total is not a default counter:
// it is used + free + reserved.
const (
	DCGMUtil        = "gpu_utilization"
	DCGMFBUsed      = "memory_used"
	DCGMFBFree      = "memory_free"
	DCGMFBReserved  = "memory_reserved"
	DCGMPower       = "power"
	DCGMTemperature = "temperature"
	DCGMSMClock     = "sm_clock"
	DCGMTensor      = "tensor_active"
	DCGMGraphics    = "graphics_active"
	DCGMXID         = "last_xid"
)

const mib = 1 << 20

// DCGMReadings are the readings the gpu query takes from dcgm-exporter.
var DCGMReadings = []DCGMReading{
	{DCGMUtil, "DCGM_FI_DEV_GPU_UTIL", 1},
	{DCGMFBUsed, "DCGM_FI_DEV_FB_USED", mib},
	{DCGMFBFree, "DCGM_FI_DEV_FB_FREE", mib},
	{DCGMFBReserved, "DCGM_FI_DEV_FB_RESERVED", mib},
	{DCGMPower, "DCGM_FI_DEV_POWER_USAGE", 1},
	{DCGMTemperature, "DCGM_FI_DEV_GPU_TEMP", 1},
	{DCGMSMClock, "DCGM_FI_DEV_SM_CLOCK", 1e6},
	{DCGMTensor, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1},
	{DCGMGraphics, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1},
	{DCGMXID, "DCGM_FI_DEV_XID_ERRORS", 1},
}

// DCGMSelector selects every reading inside the scope: one instant query
// returns every GPU's readings with all their labels. A scope on the
// workload's labels (namespace="inference") also selects series whose
// workload Prometheus renamed to exported_namespace (honorLabels false),
// where namespace is the exporter's own.
func (b Builder) DCGMSelector() string {
	names := make([]string, len(DCGMReadings))
	for i, r := range DCGMReadings {
		names[i] = r.Metric
	}
	return b.dcgmSelector("", "__name__=~"+quote(strings.Join(names, "|")))
}

// dcgmSelector is name{matchers} in the scope, or in the scope with the
// workload's labels read from exported_*.
func (b Builder) dcgmSelector(name string, extra ...string) string {
	plain := b.ScopedSelector(name, extra...)
	exported := Builder{Scope: exportedScope(b.Scope)}.ScopedSelector(name, extra...)
	if exported == plain {
		return plain
	}
	return "(" + plain + " or " + exported + ")"
}

// workloadLabels are the labels dcgm-exporter sets to the GPU's pod and
// Prometheus renames to exported_* under honorLabels false.
var workloadLabels = map[string]bool{"namespace": true, "pod": true, "container": true}

func exportedScope(scope []*labels.Matcher) []*labels.Matcher {
	out := make([]*labels.Matcher, len(scope))
	for i, m := range scope {
		out[i] = m
		if !workloadLabels[m.Name] {
			continue
		}
		// The value already compiled as this matcher's, so it compiles again.
		if em, err := labels.NewMatcher(m.Type, "exported_"+m.Name, m.Value); err == nil {
			out[i] = em
		}
	}
	return out
}

// DCGMGPU is one GPU as dcgm-exporter reports it, with the workload pod
// its kubelet pod-resources mapping found (empty when unallocated).
type DCGMGPU struct {
	Node, Index, UUID, Name string
	Namespace, Pod          string
	// Values holds the readings present, in frame units, by key; the
	// framebuffer total is added when used, free and reserved all are.
	Values map[string]float64
}

// DCGMLayout says where the workload's pod is on dcgm-exporter's series:
// with honorLabels false (the charts' default) Prometheus renames the
// exporter's pod/namespace to exported_pod/exported_namespace, and
// pod/namespace are the exporter's own; with honorLabels true they stay.
type DCGMLayout string

// The two layouts.
const (
	DCGMExported DCGMLayout = "exported"
	DCGMHonored  DCGMLayout = "honored"
)

// DetectDCGMLayout tells the layout of each exporter (scrape target: job
// and instance): exported when any of its series carries exported_pod.
// Per exporter, because an unallocated GPU has no workload labels, so
// its pod is the exporter's own in the exported layout.
func DetectDCGMLayout(vec model.Vector) map[string]DCGMLayout {
	out := map[string]DCGMLayout{}
	for _, s := range vec {
		t := target(s.Metric)
		if s.Metric["exported_pod"] != "" {
			out[t] = DCGMExported
		} else if _, ok := out[t]; !ok {
			out[t] = DCGMHonored
		}
	}
	return out
}

func target(m model.Metric) string { return string(m["job"]) + "\x00" + string(m["instance"]) }

// DCGMGPUs groups dcgm-exporter's series by GPU (node, index, UUID), in
// node then index order. The node is Hostname (up to 4.5.x) or hostname
// (renamed in 4.6.0), else the scrape target.
func DCGMGPUs(vec model.Vector) []DCGMGPU {
	layout := DetectDCGMLayout(vec)
	scale := map[string]DCGMReading{}
	for _, r := range DCGMReadings {
		scale[r.Metric] = r
	}
	byKey := map[string]*DCGMGPU{}
	for _, s := range vec {
		r, ok := scale[string(s.Metric[model.MetricNameLabel])]
		if !ok {
			continue
		}
		g := gpuOf(byKey, s.Metric, layout[target(s.Metric)])
		g.Values[r.Key] = float64(s.Value) * r.Scale
	}
	out := make([]DCGMGPU, 0, len(byKey))
	for _, g := range byKey {
		addTotal(g)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return gpuIndexLess(out[i].Index, out[j].Index)
	})
	return out
}

func gpuOf(byKey map[string]*DCGMGPU, m model.Metric, layout DCGMLayout) *DCGMGPU {
	node := firstOf(m, "Hostname", "hostname", "instance")
	k := node + "\x00" + string(m["gpu"]) + "\x00" + string(m["UUID"])
	g, ok := byKey[k]
	if !ok {
		g = &DCGMGPU{Node: node, Index: string(m["gpu"]), UUID: string(m["UUID"]), Name: string(m["modelName"]), Values: map[string]float64{}}
		if layout == DCGMExported {
			g.Namespace, g.Pod = string(m["exported_namespace"]), string(m["exported_pod"])
		} else {
			g.Namespace, g.Pod = string(m["namespace"]), string(m["pod"])
		}
		byKey[k] = g
	}
	return g
}

// DCGMFBTotal is the key of the computed framebuffer total.
const DCGMFBTotal = "memory_total"

func addTotal(g *DCGMGPU) {
	used, ok1 := g.Values[DCGMFBUsed]
	free, ok2 := g.Values[DCGMFBFree]
	res, ok3 := g.Values[DCGMFBReserved]
	if ok1 && ok2 && ok3 {
		g.Values[DCGMFBTotal] = used + free + res
	}
}

func firstOf(m model.Metric, names ...model.LabelName) string {
	for _, n := range names {
		if v := m[n]; v != "" {
			return string(v)
		}
	}
	return ""
}

// gpuIndexLess orders "2" before "10".
func gpuIndexLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Workload names the vLLM server a GPU belongs to under the builder's
// identity, when that identity is the pod's (namespace+pod, or pod):
// "" for an unallocated GPU or an identity dcgm-exporter cannot know
// (instance, Ray's ReplicaId).
func (b Builder) Workload(g DCGMGPU) string {
	if g.Pod == "" || !b.PodIdentity() {
		return ""
	}
	return b.InstanceOf(map[string]string{"namespace": g.Namespace, "pod": g.Pod})
}

// PodIdentity reports whether servers are identified by their pod
// (namespace+pod, or pod), the only identity a GPU's pod can be joined to.
func (b Builder) PodIdentity() bool {
	for _, l := range b.IdentityLabels() {
		if l != "namespace" && l != "pod" {
			return false
		}
	}
	return true
}

// DCGMSeries is every reading as a series, in frame units and tagged by
// key, with the framebuffer total as used + free + reserved.
func (b Builder) DCGMSeries() string {
	parts := make([]string, 0, len(DCGMReadings)+1)
	sel := func(name string) string { return b.dcgmSelector(name) }
	for _, r := range DCGMReadings {
		e := sel(r.Metric)
		if r.Scale != 1 {
			e = "(" + e + " * " + strconvFloat(r.Scale) + ")"
		}
		parts = append(parts, tag(e, r.Key))
	}
	total := "((" + sel("DCGM_FI_DEV_FB_USED") + " + " + sel("DCGM_FI_DEV_FB_FREE") + " + " + sel("DCGM_FI_DEV_FB_RESERVED") + ") * " + strconvFloat(mib) + ")"
	return or(append(parts, tag(total, DCGMFBTotal)))
}

// ServersByModel lists the vLLM servers that report now, by identity,
// with their model: what a GPU's workload pod is checked against.
func (b Builder) ServersByModel() string {
	return agg("group", append(append([]string(nil), b.IdentityLabels()...), "model_name"), b.EngineSelector(models.Filters{}))
}
