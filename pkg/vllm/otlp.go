package vllm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// vLLM series that reach the store over OpenTelemetry (a Collector's or
// Alloy's Prometheus receiver scraping /metrics, then OTLP into Prometheus
// 3's OTLP receiver, Mimir or another store) change shape on the way:
//   - the receiver turns a target's job and instance into the resource
//     attributes service.name and service.instance.id, and the store turns
//     them back into job and instance; every other resource attribute
//     (k8s.namespace.name and k8s.pod.name from kubernetes_sd or the
//     k8sattributes processor, a pod label) lands on the store's
//     target_info series only, unless the store promotes it
//     (otlp.promote_resource_attributes) or the pipeline copies it onto
//     the points (resource_to_telemetry_conversion);
//   - the store rebuilds names and label names by its translation strategy:
//     the escaping ones replace every character outside [a-zA-Z0-9_:] with
//     "_" (vLLM's names keep their colon: otlptranslator counts it legal),
//     the *WithSuffixes ones add _total to counters, and a receiver told to
//     trim_metric_suffixes sends counters without it, so under NoTranslation
//     and UnderscoreEscapingWithoutSuffixes they are stored without _total.
// The catalogue resolves counters under both spellings (nameGroups), and a
// builder whose detection found labels on target_info only joins them on
// (ResourceJoin).

// TargetInfoName is the series an OTLP-fed store keeps a resource's
// attributes on, one per job and instance.
const TargetInfoName = "target_info"

// ResourceKeys are the labels that identify a resource on every series and
// on target_info: what the join matches on.
var ResourceKeys = []string{"job", "instance"}

// resourceAliases are where an OTLP pipeline puts a label the plugin reads:
// OpenTelemetry's Kubernetes attributes, escaped (UnderscoreEscaping*) and
// as they are (NoUTF8Escaping*, NoTranslation); the label's own name is
// always tried first (a groupbyattrs processor, or a target label the
// pipeline moved to the resource).
var resourceAliases = map[string][]string{
	"namespace":     {"k8s_namespace_name", "k8s.namespace.name"},
	"pod":           {"k8s_pod_name", "k8s.pod.name"},
	"container":     {"k8s_container_name", "k8s.container.name"},
	"node":          {"k8s_node_name", "k8s.node.name"},
	"llm_d_ai_role": {"k8s_pod_labels_llm_d_ai_role", "k8s.pod.labels.llm-d.ai/role"},
}

// ResourceJoin says which labels the plugin reads from target_info: From
// maps each label (as queries group and filter by it) to the target_info
// label holding it. Empty: every label the plugin needs is on the series.
type ResourceJoin struct {
	From map[string]string
	// Unresolved are the identity labels when none of them is on the
	// series, promoted or on target_info: servers are then told apart by
	// the instance label (IdentityLabels), which every scrape and the OTLP
	// receiver keep.
	Unresolved []string
	// Promoted maps each label the series carry under an OpenTelemetry
	// name (a store told to promote k8s.pod.name keeps k8s_pod_name on
	// every series) to that name: read directly, renamed with
	// label_replace, no join.
	Promoted map[string]string
}

// Active reports whether any label comes from target_info.
func (j ResourceJoin) Active() bool { return len(j.From) > 0 }

// seriesLabel is the label a wanted label is matched by on the series:
// its promoted name, or itself.
func (j ResourceJoin) seriesLabel(l string) string {
	if p, ok := j.Promoted[l]; ok {
		return p
	}
	return l
}

// Labels are the joined labels, sorted.
func (j ResourceJoin) Labels() []string {
	out := make([]string, 0, len(j.From))
	for l := range j.From {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Joins reports whether label comes from target_info.
func (j ResourceJoin) Joins(label string) bool {
	_, ok := j.From[label]
	return ok
}

// OTLPShape is what the probe saw of an OTLP-fed store.
type OTLPShape struct {
	// TargetInfo is true when the store has target_info series.
	TargetInfo bool
	// UTF8Labels is true when target_info's attribute labels keep their
	// dots (NoUTF8EscapingWithSuffixes, NoTranslation), false when they are
	// escaped to "_"; Known says whether any such label told it.
	UTF8Labels, Known bool
}

// WantedLabels are the labels the builder's queries group, filter and
// name servers by beyond job and instance: identity, role and the scope's
// labels. The join is planned for these.
func (b Builder) WantedLabels() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ls ...string) {
		for _, l := range ls {
			if l != "" && !seen[l] && l != "job" && l != "instance" {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	add(b.IdentityLabels()...)
	add(b.RoleLabels()...)
	for _, m := range b.Scope {
		add(m.Name)
	}
	return out
}

// ResourceProbe is one series of target_info and one of the running gauge
// under every name the builder accepts (topk by name keeps the name and
// every label): what PlanResourceJoin compares. It is unscoped on
// purpose: a scope on a label that only target_info has would select no
// running series.
func (b Builder) ResourceProbe() string {
	names := []string{TargetInfoName}
	for _, p := range b.prefixes() {
		if s, ok := Lookup(Running); ok {
			names = append(names, s.WireNames(p)...)
		}
	}
	return "topk by (__name__) (1, {__name__=~" + quote(strings.Join(names, "|")) + "})"
}

// PlanResourceJoin reads the probe's answer: the labels wanted that the
// running gauge lacks and target_info has (under the label's own name or
// an OpenTelemetry alias), and the shape of the store.
func PlanResourceJoin(want, identity []string, probe model.Vector) (ResourceJoin, OTLPShape) {
	var running, info model.Metric
	for _, s := range probe {
		if string(s.Metric[model.MetricNameLabel]) == TargetInfoName {
			info = s.Metric
		} else {
			running = s.Metric
		}
	}
	shape := otlpShape(info)
	if running == nil {
		return ResourceJoin{}, shape
	}
	j := planJoin(want, running, info)
	j.Unresolved = unresolved(identity, running, info, j)
	return j, shape
}

// unresolved are the identity labels when every one of them is found
// nowhere (not on the series, not promoted, not on target_info, or no
// target_info at all: a pipeline that dropped it): grouping by them would
// merge every engine into one nameless server. Where some are found, the
// others are read as empty, as before.
func unresolved(identity []string, running, _ model.Metric, j ResourceJoin) []string {
	for _, l := range identity {
		if _, ok := running[model.LabelName(l)]; ok || j.Joins(l) || j.Promoted[l] != "" || l == "instance" {
			return nil
		}
	}
	return append([]string(nil), identity...)
}

// planJoin reads each wanted label from the series when they carry it,
// under its own name or promoted under an OpenTelemetry name, else from
// target_info.
func planJoin(want []string, running, info model.Metric) ResourceJoin {
	j := ResourceJoin{From: map[string]string{}, Promoted: map[string]string{}}
	has := func(m model.Metric, l string) bool { _, ok := m[model.LabelName(l)]; return ok }
	for _, l := range want {
		if has(running, l) {
			continue
		}
		if a := firstLabel(running, resourceAliases[l]); a != "" {
			j.Promoted[l] = a
			continue
		}
		if info == nil {
			continue
		}
		if src := firstLabel(info, append([]string{l}, resourceAliases[l]...)); src != "" {
			j.From[l] = src
		}
	}
	if len(j.From) == 0 && len(j.Promoted) == 0 {
		return ResourceJoin{}
	}
	return j
}

// firstLabel is the first of the labels the series has, "" for none.
func firstLabel(m model.Metric, ls []string) string {
	for _, l := range ls {
		if _, ok := m[model.LabelName(l)]; ok {
			return l
		}
	}
	return ""
}

// otlpShape tells escaped attribute labels from UTF-8 ones by target_info's
// label names other than job and instance.
func otlpShape(info model.Metric) OTLPShape {
	if info == nil {
		return OTLPShape{}
	}
	s := OTLPShape{TargetInfo: true}
	for name := range info {
		n := string(name)
		if n == "job" || n == "instance" || n == model.MetricNameLabel {
			continue
		}
		if strings.ContainsAny(n, "./-") {
			s.UTF8Labels, s.Known = true, true
			return s
		}
		if strings.Contains(n, "_") {
			s.Known = true
		}
	}
	return s
}

// Translation names the store's otlp.translation_strategy as far as the
// series tell it: the label spelling says escaping or not, counters with
// or without _total say suffixes or not. vLLM sends no units, so
// NoUTF8EscapingWithSuffixes and NoTranslation (with a receiver that keeps
// _total, the default) store the same names and cannot be told apart.
func (d Detection) Translation() string {
	if !d.OTLP.TargetInfo {
		return ""
	}
	suffixes := !d.TrimmedCounters
	switch {
	case !d.OTLP.Known && suffixes:
		return "names as vLLM exports them (any strategy with suffixes, or NoTranslation; target_info has no attribute label that tells escaping apart)"
	case !d.OTLP.Known:
		return "counters without _total (NoTranslation or UnderscoreEscapingWithoutSuffixes, with a receiver that trims suffixes)"
	case d.OTLP.UTF8Labels && suffixes:
		return "NoUTF8EscapingWithSuffixes (or NoTranslation: vLLM's names are the same under both)"
	case d.OTLP.UTF8Labels:
		return "NoTranslation (counters without _total, attribute labels with dots)"
	case suffixes:
		return "UnderscoreEscapingWithSuffixes"
	default:
		return "UnderscoreEscapingWithoutSuffixes"
	}
}

// trimmedCounter is a counter's wire name without _total, as a store keeps
// it when the receiver trimmed the suffix and the strategy adds none.
func trimmedCounter(n string) (string, bool) {
	return strings.CutSuffix(n, "_total")
}

// hasTrimmedCounters reports whether some catalogue counter is stored only
// without its _total.
func hasTrimmedCounters(names map[string]bool) bool {
	for _, s := range catalogue {
		if s.Kind != Counter {
			continue
		}
		for _, n := range []string{s.V1, s.V1Old, s.V0} {
			if t, ok := trimmedCounter(n); ok && names[t] && !names[n] {
				return true
			}
		}
	}
	return false
}

// Probes reports whether the builder needs the resource probe: only labels
// beyond the instance (identity, an explicit role label, a scope) can be
// missing from the series and on target_info instead.
func (b Builder) Probes() bool {
	for _, l := range b.Identity {
		if l != "instance" && l != "job" {
			return true
		}
	}
	return len(b.Scope) > 0 || b.RoleLabel != ""
}

// WithProbe is the builder with the probe's answer on its detection: the
// join it plans and the shape of the store. Call it before NameSelector so
// that a scope on a label only target_info has does not hide the names.
func (b Builder) WithProbe(probe model.Vector) Builder {
	b.Detected.Join, b.Detected.OTLP = PlanResourceJoin(b.WantedLabels(), b.Identity, probe)
	return b
}

// WithNames is the detection of names under every prefix, keeping what
// the probes found (Join, OTLP, Containers).
func (d Detection) WithNames(names, prefixes []string) Detection {
	out := DetectAll(names, prefixes)
	out.Join, out.OTLP, out.Containers = d.Join, d.OTLP, d.Containers
	return out
}

// JoinConflict reports whether err is Prometheus refusing the builder's
// target_info join because one job and instance matched several
// target_info series (its many-to-many error).
func (b Builder) JoinConflict(err error) bool {
	return b.joining() && err != nil && strings.Contains(err.Error(), "many-to-many matching not allowed")
}

// JoinConflictText explains JoinConflict to the user.
func (b Builder) JoinConflictText() string {
	return fmt.Sprintf("%s is read from %s, and some job/instance has two %s series that differ in it: a restart that changed it within "+
		"the store's 5-minute lookback (OTLP series get no staleness markers), or %s stored under two translation strategies. "+
		"The plugin picks neither, since either could be wrong; it clears once the older series leaves the lookback, "+
		"or promote the attributes (otlp.promote_resource_attributes) so every series carries its own",
		strings.Join(b.Detected.Join.Labels(), ", "), TargetInfoName, TargetInfoName, TargetInfoName)
}

// TwoSpellings are the counters stored both with and without _total (a
// store whose translation changed): unions read each engine once.
func (d Detection) TwoSpellings() []string {
	var out []string
	for _, s := range catalogue {
		if s.Kind != Counter {
			continue
		}
		for _, n := range []string{s.V1, s.V1Old, s.V0} {
			if t, ok := trimmedCounter(n); ok && d.Names[t] && d.Names[n] && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// UpForEngines is up for the servers that export the running gauge now
// (one sample each): empty where the pipeline sends no scrape series.
func (b Builder) UpForEngines() string {
	return "group by (job, instance) (up) and " + onLabels(ResourceKeys) + " " + agg("group", ResourceKeys, b.union(Running, models.Filters{}, ""))
}

// UnresolvedText says that the profile's identity labels are nowhere in an
// OTLP-fed store, and what the plugin does instead; "" when they are.
func (d Detection) UnresolvedText() string {
	if len(d.Join.Unresolved) == 0 {
		return ""
	}
	return fmt.Sprintf("%s on neither the engines' series nor %s: servers are told apart by instance instead. "+
		"Keep them on the way: kubernetes_sd or the k8sattributes processor put k8s.namespace.name and k8s.pod.name on the resource "+
		"(the plugin joins them from %s), or promote them (otlp.promote_resource_attributes)",
		strings.Join(d.Join.Unresolved, ", "), TargetInfoName, TargetInfoName)
}
