package vllm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// The saturation type's PromQL and verdicts: its range expressions, the
// classification of each step (Classify), and its inputs read from the
// recording rules (SaturationFromRules).

// Names of the saturation query's range expressions (SignalExpr.Name).
const (
	SatWaiting     = "waiting"
	SatRunning     = "running"
	SatRunningPeak = "running_peak"
	SatKVUsage     = "kv_usage"
	SatPreemptions = "preemptions"
	SatCompletions = "completions"
	SatQueued      = "queued_change"
	// SatRejected is requests per second refused at the queue limits, by
	// reason (vLLM 0.32's admission_rejections_total).
	SatRejected = "rejected"
)

// SaturationRejected is the saturation query's rejection rate per grouping
// and reason over the window; ok is false where detection found no engine
// exporting admission_rejections_total, so older fleets run nothing more.
func (b Builder) SaturationRejected(g models.Grouping, f models.Filters, window time.Duration) (SignalExpr, bool) {
	if !b.optional(Rejections) {
		return SignalExpr{}, false
	}
	w := interval.PromDuration(window)
	return SignalExpr{SatRejected, agg("sum", append(b.GroupLabels(g), "reason"), b.rateUnion(Rejections, f, "", w))}, true
}

// SaturationSignals are the saturation query's range expressions per
// grouping (instance or instance and engine), over the rate window:
// queue and batch averaged over the window (a scrape that catches one
// request in passing is not a queue), the batch's peak, the KV-cache
// peak, the preemption and completion rates, and the change of waiting
// plus running per second. Arrivals are completions plus that change:
// every request that arrived is either finished, running or waiting.
func (b Builder) SaturationSignals(g models.Grouping, f models.Filters, window time.Duration) []SignalExpr {
	gl := b.GroupLabels(g)
	w := interval.PromDuration(window)
	over := func(fn string, key SignalKey) string { return b.fnUnion(fn, key, f, w) }
	secs := strconv.FormatFloat(window.Seconds(), 'f', -1, 64)
	return []SignalExpr{
		{SatWaiting, agg("sum", gl, over("avg_over_time", Waiting))},
		{SatRunning, agg("sum", gl, over("avg_over_time", Running))},
		{SatRunningPeak, agg("sum", gl, over("max_over_time", Running))},
		{SatKVUsage, agg("max", gl, over("max_over_time", KVUsage))},
		{SatPreemptions, agg("sum", gl, b.rateUnion(Preemptions, f, "", w))},
		{SatCompletions, agg("sum", gl, b.rateUnion(RequestSuccess, f, "", w))},
		{SatQueued, "(" + agg("sum", gl, over("delta", Waiting)) + " + " + agg("sum", gl, over("delta", Running)) + ") / " + secs},
		{SatPrefixHitRate, b.PrefixHitRate(gl, f, w, "")},
		{SatPrefixHitRateBefore, b.PrefixHitRate(gl, f, w, w)},
	}
}

// SaturationStallSignal is the saturation query's stall expression per
// grouping: a sample at each step the group was stalled over the stall
// window before it and had reported before that window (StalledSeen: the
// VLLMEngineStalled alert's condition, never for a group too young to
// have shown it).
func (b Builder) SaturationStallSignal(g models.Grouping, f models.Filters, stallWindow time.Duration) SignalExpr {
	return SignalExpr{SatStalled, b.StalledSeen(b.GroupLabels(g), f, stallWindow)}
}

// fnUnion applies a range function to each wire name of a signal.
func (b Builder) fnUnion(fn string, key SignalKey, f models.Filters, window string) string {
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return fmt.Sprintf("%s(%s[%s])", fn, selector(n, m), window) })
}

// Verdicts of the saturation query type.
const (
	VerdictOK         = "ok"
	VerdictQueueing   = "queueing — add replicas"
	VerdictKVBound    = "KV-bound — preempting"
	VerdictOverloaded = "overloaded"
	VerdictIdle       = "idle"
	// VerdictStalled: requests are held but nothing moves; more replicas
	// would not help the requests stuck on this one.
	VerdictStalled = "stalled — restart or drain"
	// VerdictRejecting: the server refuses requests at its queue limit
	// (HTTP 503), so its queue looks bounded while demand is not.
	VerdictRejecting = "rejecting — queue full"
)

// SatStep is one step of one instance's evidence. NaN means no value.
type SatStep struct {
	Waiting, Running, RunningPeak, KVUsage, Preemptions, Completions, Arrivals float64
	// Stalled: requests were running or waiting throughout the stall
	// window before the step and no token or request counter moved.
	Stalled bool
	// PrefixHitRate is the prefix-cache hit rate over the rate window
	// and PrefixHitRateBefore over the window before it: evidence only,
	// never part of a verdict (see prefixEvidence).
	PrefixHitRate, PrefixHitRateBefore float64
	// CPUThrottled is the CFS-throttled share of the group's worst
	// container (cAdvisor): evidence only (see throttleEvidence).
	CPUThrottled float64
	// Rejected is requests per second refused at the queue limits (NaN
	// where the server exports no admission_rejections_total).
	Rejected float64
}

// SatVerdict is the verdict over the range with the numbers behind it.
type SatVerdict struct {
	Verdict, Reason string
	// Steps holds each step's verdict (never overloaded, a range verdict).
	Steps []string
	// Ceiling is the largest batch the instance ran in the range.
	Ceiling float64
	// Utilisation is running ÷ ceiling per step.
	Utilisation []float64
	// Means over the steps with a value; peaks over the range.
	MeanWaiting, MeanRunning, MeanArrivals, MeanCompletions, PeakKV, MeanPreemptions float64
	// MeanRejected is the mean rejection rate over the steps; PeakInFlight
	// the largest waiting + running (each a mean over the rate window) of a
	// rejecting step: just under the request limit (--max-num-queued-reqs)
	// when that is the one firing, as vLLM exports neither limit.
	MeanRejected, PeakInFlight float64
}

// problemShare: a problem verdict that holds in at least this share of
// the steps is the range verdict even when most steps are fine.
const problemShare = 0.25

// overloadShare: the range is overloaded only when the queue or KV is the
// problem in (nearly) every step; the first steps of a range may catch the
// queue still forming.
const overloadShare = 0.9

// ClassifyStep is one step's verdict: stalled when the step is; KV-bound when the KV cache is at or
// above KVHigh and preemptions reach their threshold; queueing when the
// mean queue reaches Queue; idle when running is below Idle × the
// ceiling; ok otherwise.
func ClassifyStep(s SatStep, ceiling float64, t models.SaturationSettings) string {
	switch {
	case s.Stalled:
		return VerdictStalled
	case val(s.Preemptions) >= t.Preemptions && val(s.KVUsage) >= t.KVHigh:
		return VerdictKVBound
	case val(s.Rejected) > 0:
		// A full queue refuses rather than grows: however short it looks,
		// demand exceeds it. KV-bound stays first: it is the cause to fix.
		return VerdictRejecting
	case val(s.Waiting) >= t.Queue:
		return VerdictQueueing
	case ceiling <= 0 || val(s.Running) < t.Idle*ceiling:
		return VerdictIdle
	}
	return VerdictOK
}

// Classify decides the verdict of one instance over the range. The range
// is stalled when its last step is or a quarter of its steps are (a hung
// engine is not fixed by replicas, so this outranks every other verdict);
// it is overloaded when arrivals exceed completions over it, the queue grew
// by at least the queue threshold and every step queued or preempted;
// otherwise a problem verdict (KV-bound, then queueing) that holds in a
// quarter of the steps wins, else the commonest of ok and idle.
func Classify(steps []SatStep, t models.SaturationSettings) SatVerdict {
	v := SatVerdict{Steps: make([]string, len(steps)), Utilisation: make([]float64, len(steps))}
	for _, s := range steps {
		v.Ceiling = math.Max(v.Ceiling, val(s.RunningPeak))
	}
	count := map[string]int{}
	var n float64
	for i, s := range steps {
		v.Steps[i] = ClassifyStep(s, v.Ceiling, t)
		count[v.Steps[i]]++
		v.Utilisation[i] = math.NaN()
		if v.Ceiling > 0 && !math.IsNaN(s.Running) {
			v.Utilisation[i] = s.Running / v.Ceiling
		}
		v.MeanWaiting += val(s.Waiting)
		v.MeanRunning += val(s.Running)
		v.MeanArrivals += val(s.Arrivals)
		v.MeanCompletions += val(s.Completions)
		v.MeanPreemptions += val(s.Preemptions)
		v.MeanRejected += val(s.Rejected)
		if val(s.Rejected) > 0 {
			v.PeakInFlight = math.Max(v.PeakInFlight, val(s.Waiting)+val(s.Running))
		}
		v.PeakKV = math.Max(v.PeakKV, val(s.KVUsage))
		n++
	}
	if n > 0 {
		v.MeanWaiting, v.MeanRunning, v.MeanArrivals = v.MeanWaiting/n, v.MeanRunning/n, v.MeanArrivals/n
		v.MeanCompletions, v.MeanPreemptions, v.MeanRejected = v.MeanCompletions/n, v.MeanPreemptions/n, v.MeanRejected/n
	}
	v.Verdict = rangeVerdict(steps, count, t, v)
	v.Reason = reason(v, count, len(steps), t)
	if v.Verdict == VerdictKVBound {
		v.Reason += prefixEvidence(steps, v.Steps)
	}
	v.Reason += throttleEvidence(steps)
	return v
}

func rangeVerdict(steps []SatStep, count map[string]int, t models.SaturationSettings, v SatVerdict) string {
	total := len(steps)
	if total == 0 {
		return VerdictIdle
	}
	if steps[total-1].Stalled || float64(count[VerdictStalled]) >= problemShare*float64(total) {
		return VerdictStalled
	}
	busy := count[VerdictQueueing] + count[VerdictKVBound]
	if float64(busy) >= overloadShare*float64(total) && total > 1 && v.MeanArrivals > v.MeanCompletions &&
		val(steps[total-1].Waiting)-val(steps[0].Waiting) >= t.Queue && count[VerdictQueueing] >= count[VerdictKVBound] {
		return VerdictOverloaded
	}
	for _, p := range []string{VerdictKVBound, VerdictRejecting, VerdictQueueing} {
		if float64(count[p]) >= problemShare*float64(total) {
			return p
		}
	}
	if count[VerdictIdle] > count[VerdictOK] {
		return VerdictIdle
	}
	return VerdictOK
}

// reason is the one line that quotes the numbers that decided the verdict.
func reason(v SatVerdict, count map[string]int, total int, t models.SaturationSettings) string {
	share := func(verdict string) string {
		if total == 0 {
			return "0%"
		}
		return pct(float64(count[verdict]) / float64(total))
	}
	switch v.Verdict {
	case VerdictStalled:
		return fmt.Sprintf("mean queue %.1f and %.1f running, but no token or request counter moved over the stall window in %s of steps: the engine is hung (a stuck worker or collective), not short of replicas; restart or drain it",
			v.MeanWaiting, v.MeanRunning, share(VerdictStalled))
	case VerdictOverloaded:
		return fmt.Sprintf("arrivals %.2f/s exceed completions %.2f/s and the queue grew (mean %.1f requests) throughout the range: add replicas",
			v.MeanArrivals, v.MeanCompletions, v.MeanWaiting)
	case VerdictKVBound:
		return fmt.Sprintf("KV cache peaked at %s (threshold %s) with %.2f preemptions/s in %s of steps: preempted requests recompute, so more replicas of the same shape will not fix it; lower max-num-seqs, add GPU memory or shorten max-model-len",
			pct(v.PeakKV), pct(t.KVHigh), v.MeanPreemptions, share(VerdictKVBound))
	case VerdictRejecting:
		return fmt.Sprintf("refused %.2f requests/s at the queue limit in %s of steps (HTTP 503; waiting + running up to %.1f while refusing, "+
			"means over the rate window, just under the request limit when --max-num-queued-reqs is the one firing), mean queue %.1f, %.1f running, KV peak %s: "+
			"demand exceeds what the queue admits; add replicas or raise --max-num-queued-reqs / --max-num-queued-tokens",
			v.MeanRejected, share(VerdictRejecting), v.PeakInFlight, v.MeanWaiting, v.MeanRunning, pct(v.PeakKV))
	case VerdictQueueing:
		return fmt.Sprintf("mean queue %.1f requests (threshold %g) in %s of steps with KV peak %s and %.2f preemptions/s; running %.1f of a %.0f-request ceiling: add replicas",
			v.MeanWaiting, t.Queue, share(VerdictQueueing), pct(v.PeakKV), v.MeanPreemptions, v.MeanRunning, v.Ceiling)
	case VerdictIdle:
		return fmt.Sprintf("running averages %.2f of a %.0f-request peak (idle threshold %s) with no queue in %s of steps",
			v.MeanRunning, v.Ceiling, pct(t.Idle), share(VerdictIdle))
	}
	return fmt.Sprintf("running averages %.1f of a %.0f-request peak, mean queue %.1f, KV peak %s, %.2f preemptions/s; arrivals %.2f/s, completions %.2f/s",
		v.MeanRunning, v.Ceiling, v.MeanWaiting, pct(v.PeakKV), v.MeanPreemptions, v.MeanArrivals, v.MeanCompletions)
}

func pct(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%" }

// val reads NaN (no value) as 0.
func val(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}

// This file plans the saturation query's signals (SaturationSignals) on
// the recording rules, signal by signal, where a recorded series answers
// the same question exactly (RuleFit's conditions); the others stay raw,
// each for the reason SaturationRawWhy gives.

// SaturationRawWhy says, for each saturation signal the rules cannot
// answer exactly, why. The load group records each gauge once per
// evaluation (30s), so a function over the window of a recorded gauge
// sees one sample per evaluation where the raw one sees every scrape, and
// sees the per-engine sum or maximum where the raw one applies the
// function to each series before summing.
var SaturationRawWhy = map[string]string{
	SatWaiting: "avg_over_time of each series summed, over every scrape in the window; the recorded sum keeps one sample " +
		"per evaluation, and the mean of those is not the mean of the scrapes",
	SatRunning:     "as waiting: a mean over every scrape, which a sum recorded once per evaluation cannot give",
	SatRunningPeak: "a sum of each series' own peak over every scrape; the recorded sum's peak misses the scrapes between evaluations and peaks of a sum are not sums of peaks",
	SatKVUsage:     "max_over_time over every scrape; the recorded maximum keeps one scrape per evaluation, so a peak between evaluations is lost",
	SatQueued: "delta() of the queue gauges, extrapolated from each series' first and last scrape in the window; " +
		"over the recorded sums it extrapolates from other samples",
	SatPrefixHitRate:       "no rule records the prefix-cache hit and query counters",
	SatPrefixHitRateBefore: "no rule records the prefix-cache hit and query counters",
	SatRejected:            "no rule records admission_rejections_total (vLLM 0.32)",
	SatStalled: "on rules only through SaturationStallFromRules, for a stall window the stall group records (1m, 3m, 5m): " +
		"its gauges' minimum and counters' increase are then recorded, the sleep state, up and the earlier window stay raw",
}

// saturationRuleRates are the saturation signals that are a plain sum of
// rate() over one counter, as the load group records per engine: the
// recorded rate summed by the query's grouping is the raw answer (no
// young-series correction here, unlike the preemptions query's rate).
var saturationRuleRates = map[string]string{SatPreemptions: "num_preemptions", SatCompletions: "request_success"}

// SaturationFromRules are the saturation signals the recording rules
// answer, read from them, by signal name: the preemption and completion
// rates (completions summed over finished_reason, as the raw sum is),
// when window is a recorded one and the grouping one the rules keep.
// Every other signal stays raw (SaturationRawWhy). The expressions are
// the raw ones with the rule's per-engine rate in place of rate() over the
// raw counter, grouped and filtered the same, so they answer the same
// question where RuleFit says the labels survive.
func (b Builder) SaturationFromRules(prefix string, g models.Grouping, f models.Filters, window string) map[string]RulePlan {
	suffix := ruleSuffix(window)
	if !RecordedGrouping(g) || suffix == "" {
		return nil
	}
	gl, m := b.GroupLabels(g), b.matchers(f)
	out := make(map[string]RulePlan, len(saturationRuleRates))
	for sig, counter := range saturationRuleRates {
		name := prefix + "vllm_" + counter + ":" + suffix
		out[sig] = RulePlan{Expr: agg("sum", gl, selector(name, m)), Names: []string{name}}
	}
	return out
}

// SaturationRulesClause is what the rules notice of a saturation answer
// adds: which signals the rules answered (names as SaturationSignals
// calls them) and that the others are raw.
func SaturationRulesClause(signals []string) string {
	s := slices.Clone(signals)
	slices.Sort(s)
	return " Read from them: " + strings.Join(s, ", ") + "; every other saturation signal from raw series."
}

// SaturationStallFromRules is the saturation stall signal with its
// inputs read from the stall group (StalledSeenFromRules) by the query's
// grouping, when the grouping is one the rules keep and the stall window
// one they record.
func (b Builder) SaturationStallFromRules(prefix string, g models.Grouping, f models.Filters, stallWindow time.Duration) (RulePlan, bool) {
	if !RecordedGrouping(g) {
		return RulePlan{}, false
	}
	return b.StalledSeenFromRules(prefix, b.GroupLabels(g), f, stallWindow)
}
