package vllm

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file reads the stall inputs and the per-engine p99s from the
// recording rules' groups vllm.recording.stall and vllm.recording.engine_p99
// (deploy/prometheus/rules/vllm-recording.rules.yml): the inputs that cost
// Prometheus most in the fleet table at 10,000 engines (issue 37).

// RuleStallWindows are the stall windows the stall group records: the
// stallWindow setting's default (3m) and its common neighbours.
var RuleStallWindows = []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute}

// stallInputs are the raw range functions the stall condition sums per
// group (Stalled), each recorded per engine under its name.
var stallInputs = []struct {
	Key  SignalKey
	Name string
	Fn   string
}{
	{Running, "num_requests_running", "min_over_time"},
	{Waiting, "num_requests_waiting", "min_over_time"},
	{GenerationTokens, "generation_tokens", "increase"},
	{PromptTokens, "prompt_tokens", "increase"},
	{RequestSuccess, "request_success", "increase"},
}

// ruleP99 are the histograms whose per-engine p99 the engine_p99 group
// records.
var ruleP99 = map[SignalKey]string{QueueTime: "request_queue_time_seconds", TTFT: "time_to_first_token_seconds"}

// stallRuleNames are the stall group's recorded names, sorted: the
// inputs and the whole state, per window.
func stallRuleNames(prefix string) []string {
	var out []string
	for _, w := range RuleStallWindows {
		for _, in := range stallInputs {
			out = append(out, stallRuleName(prefix, in.Name, in.Fn, w))
		}
		out = append(out, StallStateName(prefix, w))
	}
	slices.Sort(out)
	return out
}

// StallStateName is the recorded name of the whole stall state over
// window: one series per engine, the smallest running plus waiting over
// the window while the engine is stalled, else 0.
func StallStateName(prefix string, window time.Duration) string {
	return prefix + "vllm_stalled:" + ShortDuration(window)
}

// p99RuleNames are the engine_p99 group's recorded names, sorted.
func p99RuleNames(prefix string) []string {
	var out []string
	for w := range RuleWindows {
		for _, h := range ruleP99 {
			out = append(out, prefix+"vllm_"+h+":p99_"+w)
		}
	}
	slices.Sort(out)
	return out
}

// stallRuleName is the recorded name of fn over the input name for window.
func stallRuleName(prefix, name, fn string, window time.Duration) string {
	return prefix + "vllm_" + name + ":" + fn + ShortDuration(window)
}

// RecordedStallWindow reports whether the stall group records window.
func RecordedStallWindow(window time.Duration) bool {
	return slices.Contains(RuleStallWindows, window)
}

// StalledSeenFromRules is StalledSeen with the per-engine inputs (the
// least running and waiting over the window, the three counters'
// increases) read from the stall group's recorded series, summed by gl
// as the raw expression sums min_over_time() and increase(): the same
// answer at the rules' evaluation instants. The sleep state, the up
// series, the counters' presence and "reported before the window" stay
// raw (instant selectors, or a window the rules do not record). Names are
// the recorded names whose raw input detection found (all without
// detection). ok is false when window is not a recorded stall window.
func (b Builder) StalledSeenFromRules(prefix string, gl []string, f models.Filters, window time.Duration) (RulePlan, bool) {
	if !RecordedStallWindow(window) {
		return RulePlan{}, false
	}
	m := b.matchers(f)
	var names []string
	in := func(fn string, key SignalKey) string {
		for _, s := range stallInputs {
			if s.Key == key && s.Fn == fn {
				n := stallRuleName(prefix, s.Name, fn, window)
				if b.optional(key) {
					// A recorded name whose raw input the fleet does not
					// export has no series, and the raw input none either:
					// the same answer. Only the others must be present.
					names = append(names, n)
				}
				return selector(n, m)
			}
		}
		return b.fnUnion(fn, key, f, interval.PromDuration(window)) // not reached: every input is recorded
	}
	expr := "(" + b.stalled(gl, f, window, in) + ") and " + onLabels(gl) + " " + b.reportedBefore(gl, f, window)
	return RulePlan{Expr: expr, Names: names}, true
}

// FleetP99FromRules are the fleet table's queue-time and TTFT p99 columns
// read from the engine_p99 group: each engine's recorded p99, by the
// table's engine labels. It equals the raw histogram_quantile over the
// engine's summed bucket rates when each engine-label set holds one
// recorded series (FleetP99Shared checks); nil when window is not
// recorded.
func (b Builder) FleetP99FromRules(prefix string, f models.Filters, window string) map[string]RulePlan {
	suffix := ruleSuffix(window)
	if suffix == "" {
		return nil
	}
	el, m := b.EngineLabels(), b.matchers(f)
	out := map[string]RulePlan{}
	for sig, key := range map[string]SignalKey{FleetQueueP99: QueueTime, FleetTTFTP99: TTFT} {
		name := prefix + "vllm_" + ruleP99[key] + ":p99_" + suffix
		out[sig] = RulePlan{Expr: agg("max", el, selector(name, m)), Names: []string{name}}
	}
	return out
}

// FleetP99Shared is an instant expression that is non-empty when two
// recorded p99 series of name share the table's engine labels (servers of
// two clusters or namespaces with one address, or pod-less series under a
// pod identity): the raw quantile sums their buckets, which a recorded
// quantile cannot, so the table then reads the recorded bucket rates.
func (b Builder) FleetP99Shared(name string, f models.Filters) string {
	return "count(" + agg("count", b.EngineLabels(), selector(name, b.matchers(f))) + " > 1)"
}

// stallInput renders one stall input per series (un-aggregated): fn over
// key's raw series, or the recorded series in their place.
type stallInput func(fn string, key SignalKey) string

// RuleGroupOf is the shipped group that records name under prefix (ok
// false for a name no group records).
func RuleGroupOf(prefix, name string) (RuleGroup, bool) {
	for _, g := range RuleGroups(prefix) {
		if slices.Contains(g.Names, name) {
			return g, true
		}
	}
	return RuleGroup{}, false
}

// StallInputPair is one stall input summed by a grouping: raw, and read
// from its recorded series.
type StallInputPair struct{ Name, Raw, Rules string }

// StallInputPairs are the stall condition's five inputs per group gl for
// window, each raw and on the rules: what StalledSeenFromRules replaces,
// for the exactness tests (each pair must agree at the rules' evaluation
// instants). Empty when window is not a recorded stall window.
func (b Builder) StallInputPairs(prefix string, gl []string, f models.Filters, window time.Duration) []StallInputPair {
	if !RecordedStallWindow(window) {
		return nil
	}
	var out []StallInputPair
	for _, in := range stallInputs {
		n := stallRuleName(prefix, in.Name, in.Fn, window)
		out = append(out, StallInputPair{Name: n, Raw: agg("sum", gl, b.fnUnion(in.Fn, in.Key, f, interval.PromDuration(window))),
			Rules: agg("sum", gl, selector(n, b.matchers(f)))})
	}
	return out
}

// StalledStateFromRules is the fleet table's stall column (StalledSeen by
// the engine labels) read from the stall group's recorded state: the
// engines whose recorded value is above 0. The rule computes StalledSeen
// per engine of the rule file (cluster, namespace, pod or instance, model,
// engine), with up taken over all of the server's up series by cluster,
// namespace and pod (or instance without a pod); that is the table's
// answer where each engine-label set holds one such engine and each
// identity one such server, which StallStateShared checks. ok is false
// when window is not a recorded stall window, or when the scope matches
// on a label up does not carry (model_name, engine): the raw expression
// then selects no up series, which the rule cannot know.
func (b Builder) StalledStateFromRules(prefix string, f models.Filters, window time.Duration) (RulePlan, bool) {
	if !RecordedStallWindow(window) {
		return RulePlan{}, false
	}
	for _, m := range b.Scope {
		if m.Name == "model_name" || m.Name == "engine" {
			return RulePlan{}, false
		}
	}
	name := StallStateName(prefix, window)
	return RulePlan{Expr: agg("max", b.EngineLabels(), selector(name, b.matchers(f))+" > 0"), Names: []string{name}}, true
}

// StallStateShared is an instant expression that is non-empty where the
// recorded stall state (StalledStateFromRules) may differ from the raw
// stall column: some identity of the table (IdentityLabels) spans more
// than one of the rule's servers among the recorded state's engines and
// the up series in scope. The raw column sums every engine of an
// engine-label set and takes the least up of every series of an identity;
// the rule does both per server (cluster, namespace, pod; cluster,
// namespace, instance without a pod).
func (b Builder) StallStateShared(prefix string, window time.Duration) string {
	id := b.IdentityLabels()
	sel := func(podMatcher string) string {
		ms := append([]string{"__name__=~" + quote("up|"+regexp.QuoteMeta(StallStateName(prefix, window))), podMatcher}, b.scope()...)
		return "{" + strings.Join(ms, ", ") + "}"
	}
	server := func(extra ...string) []string {
		out := append([]string(nil), id...)
		for _, l := range append([]string{"cluster", "namespace"}, extra...) {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		return out
	}
	servers := agg("group", server("pod"), sel(`pod!=""`)) + " or " + agg("group", server("instance"), sel(`pod=""`))
	return "count(" + agg("count", id, servers) + " > 1)"
}
