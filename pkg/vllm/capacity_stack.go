package vllm

// A stack's own autoscaler beside the capacity query's answer: llm-d's
// workload variant autoscaler (WVA) publishes, per variant, the replicas it
// wants and those it sees. Its controller exports them (internal/metrics in
// llm-d-workload-variant-autoscaler) as wva_desired_replicas and
// wva_current_replicas with the labels variant_name (the Deployment it
// scales, by name), namespace (the variant's) and accelerator_type; scraped
// by Prometheus the controller pod's own namespace target label wins, so the
// variant's namespace is exported_namespace unless the scrape honours labels.
// No model label: a variant is matched to a group by its pods, whose names
// start with the Deployment's.

import (
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// WVA metric names, as llm-d's controller registers them.
const (
	WVADesired = "wva_desired_replicas"
	WVACurrent = "wva_current_replicas"
)

// wvaLabels are the labels a variant's series are read by: both spellings of
// its namespace (see the file comment).
var wvaLabels = []string{"variant_name", "exported_namespace", "namespace", "accelerator_type"}

// CapacityStackExprs are the instant expressions of the WVA's decision. They
// take neither the query's filters nor the data source's selector: the
// controller's series carry no model and live in the controller's own
// namespace, which a fleet selector such as namespace="inference" would not
// match.
func CapacityStackExprs() (desired, current string) {
	return agg("max", wvaLabels, WVADesired), agg("max", wvaLabels, WVACurrent)
}

// CapacityPods is every vLLM pod of the query's servers with its group's
// labels (instant): what variants are matched to groups by.
func (b Builder) CapacityPods(g models.Grouping, f models.Filters) string {
	labels := append([]string{"namespace", "pod"}, b.GroupLabels(g)...)
	return agg("group", labels, b.union(Running, f, ""))
}

// StackVariant is one variant the stack's autoscaler sizes.
type StackVariant struct {
	Name, Namespace, Accelerator string
	Desired, Current             float64
	// HasCurrent: the controller exported wva_current_replicas too.
	HasCurrent bool
}

// StackVariants reads the WVA's decision, one entry per variant and
// namespace, sorted by namespace and name.
func StackVariants(desired, current model.Vector) []StackVariant {
	byKey := map[string]*StackVariant{}
	var keys []string
	get := func(m model.Metric) *StackVariant {
		v := StackVariant{Name: string(m["variant_name"]), Namespace: wvaNamespace(m), Accelerator: string(m["accelerator_type"])}
		k := v.Namespace + "\x00" + v.Name + "\x00" + v.Accelerator
		if byKey[k] == nil {
			byKey[k] = &v
			keys = append(keys, k)
		}
		return byKey[k]
	}
	for _, s := range desired {
		get(s.Metric).Desired = float64(s.Value)
	}
	for _, s := range current {
		v := get(s.Metric)
		v.Current, v.HasCurrent = float64(s.Value), true
	}
	sort.Strings(keys)
	out := make([]StackVariant, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// wvaNamespace is the variant's namespace: exported_namespace where the
// scrape renamed it, else namespace.
func wvaNamespace(m model.Metric) string {
	if ns := m["exported_namespace"]; ns != "" {
		return string(ns)
	}
	return string(m["namespace"])
}

// StackDecision is the stack autoscaler's view of one group: the sums over
// the variants whose pods serve it.
type StackDecision struct {
	Desired, Current float64
	HasCurrent       bool
	Variants         []string
}

// MatchVariants attributes each variant to the groups its pods serve (a pod
// belongs to the variant of the longest name that prefixes it with a "-",
// in the same namespace), keyed by key(group labels). unmatched names the
// variants no pod of the answer belongs to. A variant whose pods serve two
// groups counts in both (a Deployment serves one model; this is for LoRA or
// role groupings that split it).
func MatchVariants(variants []StackVariant, pods model.Vector, key func(model.Metric) string) (map[string]StackDecision, []string) {
	groupsOf := make([]map[string]bool, len(variants))
	for _, p := range pods {
		if i := variantOf(variants, string(p.Metric["namespace"]), string(p.Metric["pod"])); i >= 0 {
			if groupsOf[i] == nil {
				groupsOf[i] = map[string]bool{}
			}
			groupsOf[i][key(p.Metric)] = true
		}
	}
	out := map[string]StackDecision{}
	var unmatched []string
	for i, v := range variants {
		if len(groupsOf[i]) == 0 {
			unmatched = append(unmatched, v.Namespace+"/"+v.Name)
			continue
		}
		for k := range groupsOf[i] {
			d := out[k]
			d.Desired += v.Desired
			d.Current += v.Current
			d.HasCurrent = d.HasCurrent || v.HasCurrent
			d.Variants = append(d.Variants, v.Namespace+"/"+v.Name)
			out[k] = d
		}
	}
	return out, unmatched
}

// variantOf is the index of the variant a pod belongs to, or -1.
func variantOf(variants []StackVariant, namespace, pod string) int {
	best := -1
	for i, v := range variants {
		if v.Namespace != namespace || v.Name == "" || !strings.HasPrefix(pod, v.Name+"-") {
			continue
		}
		if best < 0 || len(v.Name) > len(variants[best].Name) {
			best = i
		}
	}
	return best
}
