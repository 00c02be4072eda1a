package vllm

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file is the catalogue of the recording rules the plugin ships
// (deploy/prometheus/rules/vllm-recording.rules.yml) and what every rewrite
// onto them shares: the recorded names, discovery, and whether a question
// fits (RuleEligible, RuleFit in rulefit.go), and every notice an answer
// on them carries (on the rules, close rather than exact, mixed with raw
// steps before the rules began, left raw for want of a group). Each type's
// rewrite lives with its raw builder, in its type's file (waittime.go,
// queue.go, fleet.go, saturation.go, topk.go, stall_rules.go, slo_rules.go).

// RuleWindows are the rate windows the rule file records, by name suffix.
var RuleWindows = map[string]time.Duration{"rate1m": time.Minute, "rate5m": 5 * time.Minute}

// ruleLatency are the latency histograms the rule file records, with the
// name they are recorded under (ITL under its V1 name for both generations).
var ruleLatency = []struct {
	Key  SignalKey
	Name string
}{
	{QueueTime, "request_queue_time_seconds"}, {TTFT, "time_to_first_token_seconds"},
	{ITL, "inter_token_latency_seconds"}, {E2E, "e2e_request_latency_seconds"},
	{PrefillTime, "request_prefill_time_seconds"}, {DecodeTime, "request_decode_time_seconds"},
	{InferenceTime, "request_inference_time_seconds"},
}

// ruleGauges are the load group's gauges, recorded once per evaluation.
var ruleGauges = map[SignalKey]string{
	Running: "num_requests_running:sum", Waiting: "num_requests_waiting:sum", KVUsage: "kv_cache_usage_perc:max",
}

// ruleCounters are the load group's rates, one per window.
var ruleCounters = []string{"prompt_tokens", "generation_tokens", "request_success", "num_preemptions"}

// RuleNames are every recorded series name the rule file defines under
// the prefix ("engine:" unless the group was renamed), sorted.
func RuleNames(prefix string) []string {
	var out []string
	for _, g := range RuleGroups(prefix) {
		out = append(out, g.Names...)
	}
	slices.Sort(out)
	return out
}

// RuleGroup is one shipped recording-rule group and the names it records.
type RuleGroup struct {
	Name  string
	Names []string
	// Panels are what reads the group (health's line names them when the
	// group is missing and they stay raw).
	Panels string
	// Buckets: without the group its panels read the latency groups'
	// recorded bucket, _sum and _count rates (as exact, dearer), not raw
	// series.
	Buckets bool
}

// RuleGroups are the shipped recording-rule groups in the rule file's
// order, each with its recorded names (sorted) under the prefix.
func RuleGroups(prefix string) []RuleGroup {
	latency := func(w string) []string {
		var out []string
		for _, h := range ruleLatency {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				out = append(out, prefix+"vllm_"+h.Name+s+":"+w)
			}
		}
		slices.Sort(out)
		return out
	}
	return []RuleGroup{
		{Name: "vllm.recording.latency.rate1m", Names: latency("rate1m"), Panels: "latency quantiles, top-k by p99 and the fleet table's p99s over 1m"},
		{Name: "vllm.recording.latency.rate5m", Names: latency("rate5m"), Panels: "latency quantiles, top-k by p99 and the fleet table's p99s over 5m"},
		{Name: "vllm.recording.load", Names: loadRuleNames(prefix), Panels: "queue, the fleet table's load and rate columns, saturation's rates"},
		{Name: "vllm.recording.stall", Names: stallRuleNames(prefix), Panels: "the fleet table's and saturation's stall state"},
		{Name: "vllm.recording.engine_p99", Names: p99RuleNames(prefix), Panels: "the fleet table's queue-time and TTFT p99 per engine, and waitTime's p99 per engine", Buckets: true},
		{Name: "vllm.recording.wait_quantiles", Names: waitQuantileRuleNames(prefix), Panels: "waitTime's p50, p90, p99 and mean of queue time and TTFT per instance and per engine", Buckets: true},
		{Name: "vllm.recording.slo", Names: sloRuleNames(prefix), Panels: "slo's burn rates (and attainment over a window of 5m–3d)"},
	}
}

// loadRuleNames are the load group's recorded names, sorted.
func loadRuleNames(prefix string) []string {
	var out []string
	for w := range RuleWindows {
		for _, c := range ruleCounters {
			out = append(out, prefix+"vllm_"+c+":"+w)
		}
	}
	for _, g := range ruleGauges {
		out = append(out, prefix+"vllm_"+g)
	}
	slices.Sort(out)
	return out
}

// RuleKeptLabels are the labels a recorded series keeps (besides le on
// buckets and finished_reason on request_success): the rule file sums
// every other label away. Servers with a pod label keep pod and lose
// instance; the others keep instance.
var RuleKeptLabels = []string{"cluster", "namespace", "pod", "instance", "model_name", "engine"}

// RuleSet is what discovery found of the recording rules on one data source.
type RuleSet struct {
	// Prefix is the rule group's name prefix ("engine:").
	Prefix string
	// Present are the recorded names that have series.
	Present map[string]bool
	// Interval is the evaluation interval, from the samples' spacing; zero
	// when it could not be measured (then no query is planned on rules).
	Interval time.Duration
	// PodSeries: some recorded series carry a pod label, so they have no
	// instance label and cannot answer a grouping or filter by instance.
	PodSeries bool
}

// Found reports whether any recorded series exists.
func (r RuleSet) Found() bool { return len(r.Present) > 0 }

// RuleDiscoveryNames are the recorded names whose samples' spacing gives
// the evaluation interval, in order of preference: first the small ones
// (one series per engine), then every other.
func RuleDiscoveryNames(prefix string) []string {
	return append([]string{prefix + "vllm_num_requests_running:sum", prefix + "vllm_request_queue_time_seconds_count:rate1m",
		prefix + "vllm_time_to_first_token_seconds_count:rate5m"}, RuleNames(prefix)...)
}

// RuleNameSelector selects every series under the rule prefix inside the
// scope: what discovery lists names with.
func (b Builder) RuleNameSelector(prefix string) string {
	ms := append([]string{"__name__=~" + quote("^"+regexp.QuoteMeta(prefix)+".+")}, b.scope()...)
	return "{" + strings.Join(ms, ", ") + "}"
}

// RuleTimestamps is the instant expression whose value is the time of
// the recorded series' latest evaluation at or before the query time:
// timestamp() returns a sample's own time; max, because a series that
// stopped keeps its last sample visible for a while.
func (b Builder) RuleTimestamps(name string) string {
	return "max(timestamp(" + selector(name, strings.Join(b.scope(), ", ")) + "))"
}

// InstantQuery runs one instant query and returns its single value, ok
// false when the answer is empty.
type InstantQuery func(ctx context.Context, expr string, ts time.Time) (v float64, ok bool, err error)

// FirstValue adapts an instant query to InstantQuery: the first sample's value.
func FirstValue(query func(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error)) InstantQuery {
	return func(ctx context.Context, expr string, ts time.Time) (float64, bool, error) {
		v, _, err := query(ctx, expr, ts)
		if err != nil || len(v) == 0 {
			return 0, false, err
		}
		return float64(v[0].Value), true, nil
	}
}

// RuleInterval measures the evaluation interval of a recorded name from
// its samples' spacing: the latest evaluation's time, then the one before
// each, three in all (so one missed evaluation does not decide). Zero
// when fewer than two evaluations are within the lookback.
func (b Builder) RuleInterval(ctx context.Context, query InstantQuery, name string, now time.Time) (time.Duration, error) {
	expr := b.RuleTimestamps(name)
	var times []float64
	at := now
	for range 3 {
		v, ok, err := query(ctx, expr, at)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if len(times) > 0 && v >= times[0] {
			break // the store rounds query times: no earlier evaluation seen
		}
		times = append([]float64{v}, times...)
		at = time.UnixMilli(int64(v*1000+0.5) - 1)
	}
	return RuleIntervalFrom(times), nil
}

// RulePodProbe counts the recorded series of name that carry a pod label.
func (b Builder) RulePodProbe(name string) string {
	return "count(" + selector(name, strings.Join(append(b.scope(), `pod!=""`), ", ")) + ")"
}

// RuleIntervalFrom finds the evaluation interval in the distinct sample
// times (seconds) a RuleTimestamps answer holds: the most common gap.
func RuleIntervalFrom(values []float64) time.Duration {
	counts := map[time.Duration]int{}
	var best time.Duration
	for i := 1; i < len(values); i++ {
		gap := time.Duration((values[i]-values[i-1])*1000+0.5) * time.Millisecond
		if gap <= 0 {
			continue
		}
		counts[gap]++
		if counts[gap] > counts[best] || (counts[gap] == counts[best] && gap < best) {
			best = gap
		}
	}
	return best
}

// RuleQuestion is what a query asks, as far as rules are concerned.
type RuleQuestion struct {
	Step     time.Duration
	Window   string // the rate window ($__rate_interval), a PromQL duration; "" for gauges
	Grouping models.Grouping
	Filters  models.Filters
	// Policy is exact (the zero value too) or nearest: how close an
	// answer must be.
	Policy models.RulesPolicy
	// Scrape is the scrape interval (0 when unknown): a nearest window
	// must span four scrapes.
	Scrape time.Duration
}

// ruleSuffix is the recorded window ("rate1m") equal to the query's rate
// window, or "" when none is.
func ruleSuffix(window string) string {
	d, err := model.ParseDuration(window)
	if err != nil {
		return ""
	}
	for name, w := range RuleWindows {
		if time.Duration(d) == w {
			return name
		}
	}
	return ""
}

// RuleEligible says why the recorded series cannot answer the question
// under its policy (exactly unless q.Policy is RulesNearest), or "" when
// they can: see RuleFit.
func (b Builder) RuleEligible(rs RuleSet, q RuleQuestion) string {
	return b.RuleFit(rs, q).Why
}

// ruleLabelsKept checks every label the query groups by or matches on.
func (b Builder) ruleLabelsKept(rs RuleSet, q RuleQuestion) string {
	used := append([]string(nil), b.GroupLabels(q.Grouping)...)
	for _, m := range b.Scope {
		used = append(used, m.Name)
	}
	for _, m := range q.Filters.Labels {
		used = append(used, m.Name)
	}
	if len(q.Filters.Instances) > 0 {
		used = append(used, b.IdentityLabels()...)
	}
	for _, l := range used {
		if !slices.Contains(RuleKeptLabels, l) || (l == "instance" && rs.PodSeries) {
			return fmt.Sprintf("the recorded series do not keep the label %s", l)
		}
	}
	return ""
}

// ruleLatencyName is the recorded name of a latency series (suffix
// _bucket, _count or _sum) at the query's window; "" for a family no rule
// records.
func ruleLatencyName(prefix string, key SignalKey, suffix, window string) string {
	for _, h := range ruleLatency {
		if h.Key == key {
			return prefix + "vllm_" + h.Name + suffix + ":" + ruleSuffix(window)
		}
	}
	return ""
}

// RulePlan is a query rewritten onto recorded series.
type RulePlan struct {
	Expr string
	// Names are the recorded names it reads; all must be present.
	Names []string
}

// RuleCoverage is an instant expression that is non-empty at a time when
// the recorded series the plan reads existed then (under the filters).
func (b Builder) RuleCoverage(name string, f models.Filters) string {
	return "count(" + selector(name, b.matchers(f)) + ")"
}

// RulesNotice is the notice on an answer read from recording rules.
func RulesNotice(prefix string, interval time.Duration) string {
	return fmt.Sprintf("Answered from recording rules (%s…, every %s): each step shows the rules' latest evaluation at or before it.",
		prefix, ShortDuration(interval))
}

// ShortDuration writes a duration as PromQL does: 30s, 1m (not 1m0s).
func ShortDuration(d time.Duration) string {
	return model.Duration(d).String()
}

// RulesFitNotice is the notice on an answer read from recording rules
// under fit; window is the query's own rate window ("" for gauges).
func RulesFitNotice(prefix string, interval time.Duration, fit RuleFit, window string) string {
	if fit.Exact {
		return RulesNotice(prefix, interval)
	}
	w := ""
	if fit.Window != "" {
		if d, err := model.ParseDuration(window); err == nil {
			window = ShortDuration(time.Duration(d))
		}
		w = fmt.Sprintf(" rate window %s for the query's %s (the nearest recorded, within %g×);", fit.Window, window, NearestWindowFactor)
	}
	return fmt.Sprintf("Answered from recording rules (%s…, every %s), close rather than exact (recordingRules nearest):%s each step shows the rules' latest evaluation, at most %s before it.",
		prefix, ShortDuration(interval), w, ShortDuration(interval))
}

// RulesMixNotice is the notice on an answer read from raw series before
// from (the first step the rules answer) and from the recording rules
// from then on: RulesFitNotice's text, told from when. The time is
// written with its date when the range's end falls on another day.
func RulesMixNotice(prefix string, interval time.Duration, fit RuleFit, window string, from, end time.Time) string {
	const head = "Answered from recording rules"
	text := strings.TrimSuffix(strings.TrimPrefix(RulesFitNotice(prefix, interval, fit, window), head), ".")
	return head + " from " + clock(from, end) + " on" + text + "; raw series before, when the rules had not run yet."
}

// clock writes t in UTC as 15:04:05, with the date when end (in UTC) is
// on another day.
func clock(t, end time.Time) string {
	t, end = t.UTC(), end.UTC()
	if t.YearDay() != end.YearDay() || t.Year() != end.Year() {
		return t.Format("2006-01-02 15:04:05") + " UTC"
	}
	return t.Format("15:04:05") + " UTC"
}

// RulesMissingNotice is the notice on an answer whose columns (what)
// stay on raw series although the rules would answer them, because the
// recorded names missing (from the groups that record them) have no
// series: a group not loaded, or loaded in part. The answer is the raw
// one; the notice says why it did not come from the rules.
func RulesMissingNotice(prefix string, what string, missing []string) string {
	var groups []string
	for _, n := range missing {
		if g, ok := RuleGroupOf(prefix, n); ok && !slices.Contains(groups, g.Name) {
			groups = append(groups, g.Name)
		}
	}
	return "The " + what + " read raw series: the recording rule group " + strings.Join(groups, ", ") +
		" is missing or partly loaded (no series for " + strings.Join(missing, ", ") + "). Load all of " +
		"deploy/prometheus/rules/vllm-recording.rules.yml; Save & test lists the groups found."
}
