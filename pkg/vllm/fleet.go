package vllm

import (
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// The fleet type's PromQL: the table's per-engine expressions, the stall
// inputs, the generation markers, and the same read from the recording
// rules (FleetFromRules).

// Names of the fleet table's per-engine expressions (SignalExpr.Name).
const (
	FleetSeen        = "seen"
	FleetLastSample  = "last_sample"
	FleetUp          = "up"
	FleetGeneration  = "generation"
	FleetRunning     = "running"
	FleetWaiting     = "waiting"
	FleetKVUsage     = "kv_usage"
	FleetPreemptions = "preemptions_per_min"
	FleetQueueP99    = "queue_p99"
	FleetTTFTP99     = "ttft_p99"
	FleetRequests    = "requests"
	FleetFailed      = "failed"
	FleetGenTokens   = "generation_tokens"
	// FleetPrefixHitRate is the engine's prefix-cache hit rate over the
	// rate window (PrefixHitRate per engine).
	FleetPrefixHitRate = "prefix_hit_rate"
	// FleetCPUThrottled and FleetMemoryOfLimit are the server's worst
	// container's CFS-throttled share and working set ÷ memory limit
	// (cAdvisor; empty where it is not scraped or no limit is set).
	FleetCPUThrottled  = "container_cpu_throttled"
	FleetMemoryOfLimit = "container_memory_of_limit"
)

// FleetRejected names the fleet table's rejection expression.
const FleetRejected = "rejected"

// FleetRejectedSignal is requests per second each server refused at its
// queue limits, by server and model: vLLM counts rejections in the API
// server, so there is no engine label and every engine row of a server
// shows its server's rate. ok is false where detection found no engine
// exporting admission_rejections_total (vLLM before 0.32): the column is
// then empty, not zero, and nothing more is asked of Prometheus.
func (b Builder) FleetRejectedSignal(f models.Filters, window string) (SignalExpr, bool) {
	if !b.optional(Rejections) {
		return SignalExpr{}, false
	}
	return SignalExpr{FleetRejected, agg("sum", append(append([]string(nil), b.IdentityLabels()...), "model_name"), b.rateUnion(Rejections, f, "", window))}, true
}

// FleetSignals are the fleet table's instant expressions, one per column
// group, each aggregated by instance, engine and model so Prometheus
// returns one sample per engine. They are plain (no or-unions or
// label_replace) so they run concurrently and stay cheap at 10,000
// engines; the query package joins them by engine. window is the rate
// window; lookback is how far back an engine counts as part of the fleet
// (the query's range).
func (b Builder) FleetSignals(f models.Filters, window, lookback string) []SignalExpr {
	el := b.EngineLabels()
	q99 := func(key SignalKey) string {
		return "histogram_quantile(0.99, " + agg("sum", append([]string{"le"}, el...), b.rateUnion(key, f, "_bucket", window)) + ")"
	}
	failed := f
	failed.Labels = append(append(failed.Labels[:0:0], f.Labels...), finishedFailed)
	return []SignalExpr{
		{FleetSeen, agg("max", el, b.lastOverTime(Running, f, lookback))},
		{FleetLastSample, agg("max", el, b.timestampUnion(Running, f))},
		{FleetUp, agg("min", b.IdentityLabels(), b.joinedSelector("up"))},
		{FleetGeneration, agg("group", append(el, "__name__"), b.markerSelector(f))},
		{FleetRunning, agg("sum", el, b.union(Running, f, ""))},
		{FleetWaiting, agg("sum", el, b.union(Waiting, f, ""))},
		{FleetKVUsage, agg("max", el, b.union(KVUsage, f, ""))},
		{FleetPreemptions, "60 * " + agg("sum", el, b.rateUnion(Preemptions, f, "", window))},
		{FleetQueueP99, q99(QueueTime)},
		{FleetTTFTP99, q99(TTFT)},
		{FleetRequests, agg("sum", el, b.rateUnion(RequestSuccess, f, "", window))},
		{FleetFailed, agg("sum", el, b.rateUnion(RequestSuccess, failed, "", window))},
		{FleetGenTokens, agg("sum", el, b.rateUnion(GenerationTokens, f, "", window))},
		{FleetPrefixHitRate, b.PrefixHitRate(el, f, window, "")},
	}
}

// FleetContainerSignals are the fleet table's container columns, per
// server (the identity labels), from cAdvisor. A column whose cAdvisor
// family the probe did not find (cadvisor.go) is left out: its answer
// would be empty, and at 10,000 engines its joins cost Prometheus more
// than any other column to find that out. The table shows it absent,
// as it did when the expression answered nothing.
func (b Builder) FleetContainerSignals(f models.Filters, window string, cs models.ContainerSettings) []SignalExpr {
	id := b.IdentityLabels()
	var out []SignalExpr
	for _, c := range []struct{ name, signal string }{
		{FleetCPUThrottled, ContainerCPUThrottled}, {FleetMemoryOfLimit, ContainerMemoryOfLimit}} {
		if b.containerAnswers(c.signal) {
			out = append(out, SignalExpr{c.name, b.ContainerWorstBy(c.signal, id, f, window, cs)})
		}
	}
	return out
}

// finishedFailed selects the finished requests that did not end well:
// vLLM's finished_reason abort and error.
var finishedFailed = labels.MustNewMatcher(labels.MatchRegexp, "finished_reason", "abort|error")

// markerSelector selects every generation marker name (V1 and V0), for
// telling each engine's generation apart in a mixed fleet. A histogram
// marker is selected by its _count series: the anchored regex would never
// match its base name, which no series has. Every prefix of the builder
// is matched (a profile can accept several, e.g. kserve_vllm: and vllm:).
func (b Builder) markerSelector(f models.Filters) string {
	names := make([]string, 0, len(v1Markers)+len(v0Markers))
	for _, n := range append(append([]string{}, v1Markers...), v0Markers...) {
		names = append(names, regexp.QuoteMeta(markerSeries(n)))
	}
	re := prefixesRegex(b.prefixes()) + "(" + strings.Join(names, "|") + ")"
	m := b.matchers(f)
	if m != "" {
		m = ", " + m
	}
	return "{__name__=~" + quote(re) + m + "}"
}

// prefixesRegex is the regex of any of the prefixes: the quoted prefix
// alone when there is one (the single-prefix selector stays as it was),
// else a non-capturing alternation, longest first so a prefix that
// begins another never shadows it.
func prefixesRegex(prefixes []string) string {
	if len(prefixes) == 1 {
		return regexp.QuoteMeta(prefixes[0])
	}
	sorted := append([]string(nil), prefixes...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	quoted := make([]string, len(sorted))
	for i, p := range sorted {
		quoted[i] = regexp.QuoteMeta(p)
	}
	return "(?:" + strings.Join(quoted, "|") + ")"
}

// MarkerGeneration is the generation a marker wire name belongs to under
// any of the prefixes (a profile can accept several), or GenUnknown.
func MarkerGeneration(name string, prefixes ...string) Generation {
	for _, p := range prefixes {
		if g := markerGeneration(name, p); g != GenUnknown {
			return g
		}
	}
	return GenUnknown
}

// markerGeneration is MarkerGeneration under one prefix.
func markerGeneration(name, prefix string) Generation {
	base, ok := baseName(name, prefix)
	if !ok {
		return GenUnknown
	}
	for _, m := range v1Markers {
		if m == base {
			return GenV1
		}
	}
	for _, m := range v0Markers {
		if m == base {
			return GenV0
		}
	}
	return GenUnknown
}

// markerSeries is the series name a marker is selected by: the base name,
// or its _count series for a histogram.
func markerSeries(base string) string {
	if isHistogramBase(base) {
		return base + "_count"
	}
	return base
}

// FleetFromRules are the fleet table's per-engine signals (FleetSignals)
// that the recording rules record, read from them, by signal name: the
// load gauges always, and the rates and queue/TTFT p99 when window is a
// recorded one. The others (seen, last sample, up, generation, prefix hit
// rate, stall and role) stay raw. Each is the raw expression with the
// rule's per-engine series in place of the raw ones, grouped by the same
// engine labels, so it answers the same question where RuleFit says the
// labels survive.
func (b Builder) FleetFromRules(prefix string, f models.Filters, window string) map[string]RulePlan {
	el, m := b.EngineLabels(), b.matchers(f)
	read := func(op, name, matchers string) RulePlan {
		return RulePlan{Expr: agg(op, el, selector(name, matchers)), Names: []string{name}}
	}
	out := map[string]RulePlan{
		FleetRunning: read("sum", prefix+"vllm_"+ruleGauges[Running], m),
		FleetWaiting: read("sum", prefix+"vllm_"+ruleGauges[Waiting], m),
		FleetKVUsage: read("max", prefix+"vllm_"+ruleGauges[KVUsage], m),
	}
	suffix := ruleSuffix(window)
	if suffix == "" {
		return out
	}
	failed := f
	failed.Labels = append(append(failed.Labels[:0:0], f.Labels...), finishedFailed)
	success := prefix + "vllm_request_success:" + suffix
	out[FleetRequests] = read("sum", success, m)
	out[FleetFailed] = read("sum", success, b.matchers(failed))
	out[FleetGenTokens] = read("sum", prefix+"vllm_generation_tokens:"+suffix, m)
	pre := read("sum", prefix+"vllm_num_preemptions:"+suffix, m)
	pre.Expr = "60 * " + pre.Expr
	out[FleetPreemptions] = pre
	for sig, key := range map[string]SignalKey{FleetQueueP99: QueueTime, FleetTTFTP99: TTFT} {
		bucket := ruleLatencyName(prefix, key, "_bucket", window)
		out[sig] = RulePlan{Expr: "histogram_quantile(0.99, " + agg("sum", append([]string{"le"}, el...), selector(bucket, m)) + ")",
			Names: []string{bucket}}
	}
	return out
}
