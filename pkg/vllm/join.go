package vllm

import (
	"sort"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// joinResource joins the labels detection found on target_info only onto
// an expression of engine series:
//
//	expr * on (job, instance) group_left (namespace, pod) max by (job, instance, namespace, pod) (label_replace(target_info{…}, …))
//
// target_info's labels are copied under the names queries use
// (label_replace from k8s_pod_name or k8s.pod.name), and the max by
// collapses target_info series that differ only in attributes nobody reads
// (a restarted process's pid). Two series that still differ for one
// job+instance (the pod changed, or a name spelled two ways) make
// Prometheus refuse the join ("many-to-many matching not allowed"), which
// the query layer explains (JoinConflict): never a wrong join. Its
// value is 1, so the product keeps expr's values.
//
// Without matchers on the joined labels, engines whose instance has no
// target_info are kept unjoined ("or on (job, instance) expr"), so a
// missing target_info drops no engine; with them (a scope of
// namespace="inference"), only engines known to match are kept.
func (b Builder) joinResource(expr string, info []string) string {
	j := b.Detected.Join
	expr = promotedNames(expr, j)
	if !j.Active() {
		return expr
	}
	joined := expr + " * " + onLabels(ResourceKeys) + " group_left (" + strings.Join(j.Labels(), ", ") + ") " + b.resourceInfo(info)
	if len(info) > 0 {
		return "(" + joined + ")"
	}
	return "(" + joined + " or " + onLabels(ResourceKeys) + " " + expr + ")"
}

// resourceInfo is target_info under the info matchers, one series per job
// and instance with the joined labels under the names queries use.
func (b Builder) resourceInfo(info []string) string {
	j := b.Detected.Join
	expr := selector(TargetInfoName, strings.Join(info, ", "))
	for _, l := range j.Labels() {
		if src := j.From[l]; src != l {
			expr = "label_replace(" + expr + ", " + quote(l) + `, "$1", ` + quote(src) + `, "(.*)")`
		}
	}
	return agg("max", append(append([]string(nil), ResourceKeys...), j.Labels()...), expr)
}

// infoMatchers are the filters' matchers that go on target_info.
func (b Builder) infoMatchers(f models.Filters) []string {
	_, info := b.splitMatchers(f)
	return info
}

// joining reports whether labels come from target_info or are renamed
// from promoted attributes: either way an engine part is no longer a bare
// selector (timestamp() must go inside) and the rules' series lack them.
func (b Builder) joining() bool {
	return b.Detected.Join.Active() || len(b.Detected.Join.Promoted) > 0
}

// joinScoped joins an expression of engine or scrape series to
// target_info under the scope alone.
func (b Builder) joinScoped(expr string) string {
	return b.joinResource(expr, b.infoMatchers(models.Filters{}))
}

// timestampUnion is the newest sample's own time of every engine's series
// of key. timestamp() of anything but a selector is the evaluation time,
// so with a join it goes inside, on each selector.
func (b Builder) timestampUnion(key SignalKey, f models.Filters) string {
	if !b.joining() {
		return "timestamp(" + b.union(key, f, "") + ")"
	}
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return "timestamp(" + selector(n, m) + ")" })
}

// joinedSelector is name{scope, extra…} joined to target_info like the
// engine series: up and the scrape series, grouped by identity labels
// that only target_info has.
func (b Builder) joinedSelector(name string, extra ...string) string {
	return b.joinScoped(b.ScopedSelector(name, extra...))
}

// promotedNames copies each promoted label to the name queries use
// (label_replace: pod from k8s_pod_name), so a store that promotes the
// attributes is read directly, without target_info.
func promotedNames(expr string, j ResourceJoin) string {
	ls := make([]string, 0, len(j.Promoted))
	for l := range j.Promoted {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	for _, l := range ls {
		expr = "label_replace(" + expr + ", " + quote(l) + `, "$1", ` + quote(j.Promoted[l]) + `, "(.*)")`
	}
	return expr
}

// Joining reports whether the builder reads labels from target_info or
// renames promoted ones: its engine selector is then an expression, not a
// series selector, and label values are listed with RecentValues.
func (b Builder) Joining() bool { return b.joining() }

// RecentValues is one sample per value of label among the engines that
// reported in the window under the filters, joined like every engine
// series: the picker lists of an OTLP-fed store, where the label values
// API cannot see labels that only target_info holds.
func (b Builder) RecentValues(label string, f models.Filters, window string) string {
	return agg("group", []string{label}, b.lastOverTime(Running, f, window))
}
