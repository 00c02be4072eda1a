package vllm

import (
	"regexp"
	"sort"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// ForSettings is the builder of a data source: prefixes, identity labels,
// exclusions and scope from its settings (and profile). Every query type
// builds its PromQL from it, so a new type gets pod identity for free by
// grouping with GroupLabels/IdentityLabels and naming servers with
// InstanceOf.
func ForSettings(s models.Settings) Builder {
	return Builder{Prefix: s.MetricPrefix, Prefixes: s.MetricPrefixes, InstanceLabel: s.InstanceLabel,
		Identity: s.Identity, Exclude: s.Exclude, Scope: s.Selector, Gateway: s.Gateway, GatewayPrefixes: s.GatewayPrefixes,
		RoleLabel: s.RoleLabel}
}

// IdentitySeparator joins the identity labels' values into one server name.
const IdentitySeparator = "/"

// IdentityLabels are the labels that identify one vLLM server: the
// profile's (namespace+pod on Kubernetes), else the instance label, also
// when an OTLP-fed store has the profile's labels nowhere (Unresolved).
func (b Builder) IdentityLabels() []string {
	if len(b.Detected.Join.Unresolved) > 0 {
		return []string{"instance"} // rebuilt from service.instance.id on every OTLP series
	}
	if len(b.Identity) > 0 {
		return b.Identity
	}
	return []string{b.InstanceLabel}
}

// InstanceOf names the server a series belongs to: its identity labels'
// values joined by "/" ("inference/vllm-0"), as display names show it.
func (b Builder) InstanceOf(ls map[string]string) string {
	id := b.IdentityLabels()
	if len(id) == 1 {
		return ls[id[0]]
	}
	parts := make([]string, len(id))
	for i, l := range id {
		parts[i] = ls[l]
	}
	return strings.Join(parts, IdentitySeparator)
}

// labelValues are the values one label must take.
type labelValues struct {
	label  string
	values []string
}

// instanceValues turns instance names back into label values. With one
// identity label it is an exact match; with several, each label matches
// the values it takes in the names, which is exact for one name and for
// names that differ in one label (a namespace's pods), and otherwise also
// admits the cross combinations (ns-a/p2 when ns-a/p1 and ns-b/p2 are asked for).
func (b Builder) instanceValues(names []string) []labelValues {
	id := b.IdentityLabels()
	if len(id) == 1 {
		return []labelValues{{id[0], names}}
	}
	values := make([][]string, len(id))
	for _, n := range names {
		parts := strings.SplitN(n, IdentitySeparator, len(id))
		for len(parts) < len(id) {
			parts = append([]string{""}, parts...) // a bare pod name: namespace unknown
		}
		for i, p := range parts {
			values[i] = append(values[i], p)
		}
	}
	out := make([]labelValues, 0, len(id))
	for i, l := range id {
		if onlyEmpty(values[i]) {
			continue
		}
		out = append(out, labelValues{l, distinct(values[i])})
	}
	return out
}

// instanceMatchers renders instanceValues as matchers on the series.
func (b Builder) instanceMatchers(names []string) []string {
	lvs := b.instanceValues(names)
	out := make([]string, len(lvs))
	for i, lv := range lvs {
		out[i] = matchAny(lv.label, lv.values)
	}
	return out
}

func distinct(vs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func onlyEmpty(vs []string) bool {
	for _, v := range vs {
		if v != "" {
			return false
		}
	}
	return true
}

// PrefixList is every accepted metric prefix, the primary first.
func (b Builder) PrefixList() []string { return b.prefixes() }

// prefixes are every accepted metric prefix, the primary first.
func (b Builder) prefixes() []string {
	if len(b.Prefixes) > 0 {
		return b.Prefixes
	}
	return []string{b.Prefix}
}

// NamesRegex is the anchored regex of every metric name under any of the
// builder's prefixes, for detection and health.
func (b Builder) NamesRegex() string {
	ps := b.prefixes()
	if len(ps) == 1 {
		return NameMatcherRegex(ps[0])
	}
	quoted := make([]string, len(ps))
	for i, p := range ps {
		quoted[i] = regexp.QuoteMeta(p)
	}
	sort.Strings(quoted)
	return "(?:" + strings.Join(quoted, "|") + ").+"
}

// DetectAll is Detect over every prefix: base names found under any of
// them count.
func DetectAll(names []string, prefixes []string) Detection {
	if len(prefixes) == 1 {
		return Detect(names, prefixes[0])
	}
	var all []string
	for _, p := range prefixes {
		for base := range Detect(names, p).Names {
			all = append(all, prefixes[0]+base)
		}
	}
	return Detect(all, prefixes[0])
}

// RecentIdentities groups every engine that reported in the window by the
// identity labels: the server list for pickers and variables when the
// identity is more than one label (label values cannot pair them).
func (b Builder) RecentIdentities(f models.Filters, window string) string {
	if b.joining() {
		return agg("group", b.IdentityLabels(), b.lastOverTime(Running, f, window))
	}
	m := b.matchers(f)
	var parts []string
	for _, n := range b.names(Running) {
		parts = append(parts, "last_over_time("+selector(n, m)+"["+window+"])")
	}
	return agg("group", b.IdentityLabels(), or(parts))
}

// lastOverTime is last_over_time of every name of the signal, or-unioned:
// a range needs a plain selector, so a union of several names (several
// prefixes or generations) cannot take one.
func (b Builder) lastOverTime(key SignalKey, f models.Filters, window string) string {
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return "last_over_time(" + selector(n, m) + "[" + window + "])" })
}
