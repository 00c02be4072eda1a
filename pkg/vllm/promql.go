package vllm

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// SignalTagLabel is the plugin's internal tag naming the signal of each
// series in a Prometheus answer: combined expressions set it so that one
// round trip can carry several signals, and pkg/query sets it on answers
// it runs one signal at a time. It never reaches a panel: frames write
// frames.FieldSignalLabel in its place.
const SignalTagLabel = "vllm_signal"

// Builder writes PromQL for one data source: its metric prefix, the label
// that identifies an instance, and the names detection found.
type Builder struct {
	Prefix        string
	InstanceLabel string
	// Detected, when it found anything, limits unions to names that exist;
	// an empty detection keeps every name so a query never goes blank.
	Detected Detection
	// Resolution is the scrape interval as a PromQL duration; with it,
	// rates that stand alone (not in a ratio) are corrected for series
	// younger than their window (see youngRate).
	Resolution string
	// Scope is the data source's selector: matchers added to every series
	// selector this builder writes, so a shared store shows one fleet.
	Scope []*labels.Matcher
	// Prefixes, when set, are every accepted prefix (Prefix first): names
	// are unioned across them (Ray Serve's ray_vllm: and ray_vllm_).
	Prefixes []string
	// Identity, when set, are the labels identifying one server
	// (namespace+pod); InstanceLabel alone otherwise. See identity.go.
	Identity []string
	// Exclude matchers go on every engine selector (not on agent or
	// discovery selectors): they drop non-engine series under vLLM's names.
	Exclude []*labels.Matcher
	// Gateway adds the endpoint picker's gauges to the queue (llm-d, KServe).
	Gateway bool
	// GatewayPrefixes go before the picker's names ("" for its own, kserve_
	// on KServe); empty means its own names only.
	GatewayPrefixes []string
	// RoleLabel, when set, is the one label carrying an engine's
	// prefill/decode role; empty tries KnownRoleLabels (role.go).
	RoleLabel string
}

// quote is the one escaping function for label values: PromQL string
// literals follow Go's quoting rules, so strconv.Quote cannot be escaped out of.
func quote(v string) string { return strconv.Quote(v) }

// labelName writes a label name in a selector: quoted where it is not a
// legacy name (an OTLP attribute kept with its dots, k8s.pod.name), which
// Prometheus 3 reads.
func labelName(n string) string {
	if model.LabelName(n).IsValidLegacy() {
		return n
	}
	return quote(n)
}

// matchAny matches a label against literal values: = for one value, an
// anchored alternation of regexp-quoted values for several.
func matchAny(label string, values []string) string {
	label = labelName(label)
	if len(values) == 1 {
		return label + "=" + quote(values[0])
	}
	sorted := append([]string(nil), values...)
	sort.Strings(sorted)
	parts := make([]string, 0, len(sorted))
	for i, v := range sorted {
		if i > 0 && v == sorted[i-1] {
			continue
		}
		parts = append(parts, regexp.QuoteMeta(v))
	}
	return label + "=~" + quote(strings.Join(parts, "|"))
}

// matchers renders the scope, the filter matchers and the query's own
// label matchers, in a stable order. Parsed matchers are rendered by
// Prometheus' labels.Matcher.String, which quotes names and values itself.
// Matchers on labels read from target_info are left out: infoMatchers
// puts them on target_info (join.go).
func (b Builder) matchers(f models.Filters) string {
	own, _ := b.splitMatchers(f)
	return strings.Join(own, ", ")
}

// splitMatchers renders the matchers of matchers(f): own on the series,
// info on target_info (renamed to its labels) for the joined labels.
func (b Builder) splitMatchers(f models.Filters) (own, info []string) {
	put := func(label string, render func(name string) string) {
		if src, ok := b.Detected.Join.From[label]; ok {
			info = append(info, render(src))
			return
		}
		own = append(own, render(b.Detected.Join.seriesLabel(label)))
	}
	for _, m := range b.Scope {
		put(m.Name, renamed(m))
	}
	if len(f.Models) > 0 {
		put("model_name", func(n string) string { return matchAny(n, f.Models) })
	}
	if len(f.Instances) > 0 {
		for _, lv := range b.instanceValues(f.Instances) {
			put(lv.label, func(n string) string { return matchAny(n, lv.values) })
		}
	}
	if len(f.Engines) > 0 {
		put("engine", func(n string) string { return matchAny(n, f.Engines) })
	}
	for _, m := range f.Labels {
		put(m.Name, renamed(m))
	}
	for _, m := range b.Exclude {
		own = append(own, m.String())
	}
	return own, info
}

// renamed renders a parsed matcher under another label name.
func renamed(m *labels.Matcher) func(string) string {
	return func(n string) string {
		if n == m.Name {
			return m.String()
		}
		return labels.MustNewMatcher(m.Type, n, m.Value).String()
	}
}

// scope renders the data source's selector matchers on the series' own
// labels (those on target_info only go on target_info: see splitMatchers).
func (b Builder) scope() []string {
	out := make([]string, 0, len(b.Scope)+3)
	for _, m := range b.Scope {
		if !b.Detected.Join.Joins(m.Name) {
			out = append(out, renamed(m)(b.Detected.Join.seriesLabel(m.Name)))
		}
	}
	return out
}

// ScopedSelector is name{scope, extra…}: a series selector of one metric
// inside the data source's scope, e.g. for agent discovery (up{job="…"}).
func (b Builder) ScopedSelector(name string, extra ...string) string {
	return selector(name, strings.Join(append(b.scope(), extra...), ", "))
}

// NameSelector selects every series whose name has the prefix, inside the
// scope: what detection and health list metric names with.
func (b Builder) NameSelector() string {
	ms := append([]string{"__name__=~" + quote(b.NamesRegex())}, b.scope()...)
	return "{" + strings.Join(ms, ", ") + "}"
}

// selector renders name{matchers}.
func selector(name, matchers string) string {
	if matchers == "" {
		return name
	}
	return name + "{" + matchers + "}"
}

// GroupLabels returns the labels a grouping keeps.
func (b Builder) GroupLabels(g models.Grouping) []string {
	switch g {
	case models.GroupModel:
		return []string{"model_name"}
	case models.GroupInstance:
		return b.IdentityLabels()
	case models.GroupInstanceEngine:
		return append(append([]string(nil), b.IdentityLabels()...), "engine")
	case models.GroupRole:
		return b.RoleLabels()
	default:
		return nil
	}
}

// by renders "by (a, b)" for an aggregation; extra labels come first.
func by(labels ...string) string {
	return "by (" + strings.Join(labels, ", ") + ")"
}

// names returns the wire names of a signal to union, V1 first, limited to
// those detected when detection found any of them.
func (b Builder) names(key SignalKey) []string {
	var out []string
	for _, g := range b.nameGroups(key) {
		out = append(out, g...)
	}
	return out
}

// nameGroups is names by prefix, in the builder's order of prefixes; a
// prefix none of whose names is kept has no group.
func (b Builder) nameGroups(key SignalKey) [][]string {
	s, ok := Lookup(key)
	if !ok {
		panic(fmt.Sprintf("vllm: unknown signal %q", key)) // a typo in our code, caught by tests
	}
	var all, present [][]string
	for _, p := range b.prefixes() {
		var a, pr []string
		for _, n := range s.WireNames(p) {
			a = append(a, n)
			if b.Detected.Has(strings.TrimPrefix(n, p)) {
				pr = append(pr, n)
			}
			// A counter an OTLP pipeline stored without _total (otlp.go).
			if t, ok := trimmedCounter(n); ok && s.Kind == Counter && b.Detected.Has(strings.TrimPrefix(t, p)) {
				pr = append(pr, t)
			}
		}
		all = append(all, a)
		if len(pr) > 0 {
			present = append(present, pr)
		}
	}
	if len(present) == 0 {
		return all
	}
	return present
}

// unionOfF renders each wire name of a signal and unions the results.
// Within one prefix the names are generations of one metric: "a or b",
// whose set matching on the labels without the name counts an engine that
// exposes both once. Across prefixes they are one engine seen by two
// scrapes: OpenDataHub's KServe scrapes every engine twice, renamed
// kserve_vllm:* by one monitor and under vLLM's own names by its -default
// twin, with jobs that differ, so a plain "or" kept both copies and sums
// counted the engine twice. A later prefix's series count only for servers
// no earlier prefix has: "or on (identity labels)".
//
// Where labels come from target_info (join.go), each part is joined to it,
// with the filters' matchers on those labels put on target_info.
func (b Builder) unionOfF(key SignalKey, f models.Filters, render func(name string) string) string {
	_, info := b.splitMatchers(f)
	var groups []string
	for _, g := range b.nameGroups(key) {
		parts := make([]string, len(g))
		for i, n := range g {
			parts[i] = b.joinResource(render(n), info)
		}
		groups = append(groups, orGroup(parts))
	}
	if len(groups) == 1 {
		return groups[0]
	}
	return "(" + strings.Join(groups, " or on ("+strings.Join(b.IdentityLabels(), ", ")+") ") + ")"
}

// orGroup is parts joined by "or", in parentheses when more than one.
func orGroup(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// union selects a signal across generations: "a{m} or b{m}". Set operators
// match on labels without the metric name, so an engine exposing both names
// (V1 0.9–0.11 kept the old KV name) counts once.
func (b Builder) union(key SignalKey, f models.Filters, suffix string) string {
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return selector(n+suffix, m) })
}

// rateUnion is union for counters and histogram series under rate().
func (b Builder) rateUnion(key SignalKey, f models.Filters, suffix, window string) string {
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return fmt.Sprintf("rate(%s[%s])", selector(n+suffix, m), window) })
}

// tag wraps an expression so its series carry SignalTagLabel=name.
func tag(expr, name string) string {
	return fmt.Sprintf("label_replace(%s, %q, %q, \"\", \"\")", expr, SignalTagLabel, name)
}

// agg renders "op by (labels) (expr)", or "op(expr)" without labels.
func agg(op string, labels []string, expr string) string {
	if len(labels) == 0 {
		return op + "(" + expr + ")"
	}
	return op + " " + by(labels...) + " (" + expr + ")"
}

// or joins tagged parts into one expression.
func or(parts []string) string { return strings.Join(parts, " or ") }

// EngineSelector selects every engine's running gauge (both generations
// expose it) under the filters: the series set resource routes list labels of.
func (b Builder) EngineSelector(f models.Filters) string {
	return b.union(Running, f, "")
}

// GPUMetricNames are the node agent's per-GPU gauges as Prometheus stores
// them when it scrapes the agents.
var GPUMetricNames = []string{
	"vllm_node_gpu_memory_used_bytes", "vllm_node_gpu_memory_total_bytes", "vllm_node_gpu_utilization_ratio",
	"vllm_node_gpu_memory_utilization_ratio", "vllm_node_gpu_temperature_celsius", "vllm_node_gpu_power_watts",
}

// GPUSeries selects every agent gauge, tagged by reading, for the GPUs of
// the given vLLM instances (all GPUs when none are given).
func (b Builder) GPUSeries(instances []string) string {
	ms := b.scope()
	if len(instances) > 0 {
		ms = append(ms, matchAny("vllm_instance", instances))
	}
	m := strings.Join(ms, ", ")
	parts := make([]string, len(GPUMetricNames))
	for i, n := range GPUMetricNames {
		parts[i] = tag(selector(n, m), strings.TrimPrefix(n, "vllm_node_gpu_"))
	}
	return or(parts)
}

// youngRateUnion is rateUnion for a rate that stands alone (not divided by
// another rate over the same series, where the error cancels). Prometheus'
// rate() divides the increase it saw by the whole window, so a series
// younger than the window (an engine that just started) reads low by
// window ÷ age. Each series' rate is scaled by window ÷ the time it has
// covered: see youngCovered.
func (b Builder) youngRateUnion(key SignalKey, f models.Filters, suffix, window string) string {
	w, err := model.ParseDuration(window)
	if b.Resolution == "" || err != nil {
		return b.rateUnion(key, f, suffix, window)
	}
	res, err := model.ParseDuration(b.Resolution)
	if err != nil {
		return b.rateUnion(key, f, suffix, window)
	}
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string {
		sel := selector(n+suffix, m)
		return fmt.Sprintf("(rate(%s[%s]) * (%s / %s))", sel, window, seconds(w), youngCovered(sel, w, res))
	})
}

// youngCovered is the time a series has covered of a window w, between
// res and w: time() minus its oldest sample, found with timestamp() (a
// sample's own time) at the minimum over a subquery stepped at res.
//
// The subquery spans w+res, not w, so that a series at least w old reads
// exactly w (a factor of exactly 1, written w / covered so no rounding is
// left): its steps lie on multiples of res, and every half-open interval
// of length res holds one, so one step s lies in (t-w-res, t-w] whether
// the range is left-open (Prometheus 3, VictoriaMetrics' rollup windows)
// or closed (Prometheus 2), at any evaluation time t. timestamp() at s
// is the last sample at or before s (Prometheus' lookback; VictoriaMetrics'
// rollup window, at least the step), so the minimum is at or before t-w
// and clamp_max makes it w. Over a range of only w the first step is
// after t-w on Prometheus 3 (and on Prometheus 2 at unaligned times),
// and timestamp() there may return a sample up to res after t-w: every
// steady series then read up to w ÷ (w-res) high (1.33× at 60s over 15s).
// A younger series has no sample before its first, so the extra res
// changes nothing for it: the minimum is its first sample. The range is
// written in plain seconds ("75s", not "1m15s") for every back end's parser.
func youngCovered(sel string, w, res model.Duration) string {
	return fmt.Sprintf("clamp_min(clamp_max(time() - min_over_time(timestamp(%s)[%s:%s]), %s), %s)",
		sel, interval.PromDuration(time.Duration(w+res)), interval.PromDuration(time.Duration(res)), seconds(w), seconds(res))
}

// seconds renders a duration as a PromQL number of seconds.
func seconds(d model.Duration) string {
	return strconv.FormatFloat(time.Duration(d).Seconds(), 'f', -1, 64)
}
