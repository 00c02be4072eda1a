package vllm

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// WorkloadFamilies maps the workload query's distribution views to their
// per-request length histograms.
var WorkloadFamilies = map[string]SignalKey{
	models.WorkloadPrompt:     RequestPromptTokens,
	models.WorkloadGeneration: RequestGenerationTokens,
}

// Workload signal names, as SignalTagLabel values.
const (
	WorkloadPromptMean     = "prompt_tokens_mean"
	WorkloadGenerationMean = "generation_tokens_mean"
	WorkloadRequests       = "requests"
	ErrorShare             = "error_share"
	GatewayErrorShare      = "gateway_error_share"
)

// The endpoint picker's request counters, current name first (llm-d
// dual-emits both): every request it routed, and those it failed (the
// error counter carries error_code and appears with its first error).
var (
	gatewayRequests = []string{"llm_d_epp_request_total", "inference_objective_request_total"}
	gatewayErrors   = []string{"llm_d_epp_request_error_total", "inference_objective_request_error_total"}
)

// errorReason selects the requests vLLM finished with an error
// (finished_reason="error", V1 from about 0.13; V0 never had it).
var errorReason = labels.MustNewMatcher(labels.MatchEqual, "finished_reason", "error")

// HistogramBuckets is one expression for a histogram family's distribution (a
// length or a latency heatmap): per step and
// grouping, the requests finished in each cumulative le bucket of key's
// histogram, as Prometheus stores the buckets (no bound is assumed; the
// frames de-accumulate them). When the step holds enough scrapes
// (perStep) it is the increase over exactly the step, so the steps tile
// the range and their counts add up; a shorter step would leave too few
// samples in it, and then it is the rate over window times the step, a
// smoothed estimate.
func (b Builder) HistogramBuckets(key SignalKey, g models.Grouping, f models.Filters, window string, step time.Duration, perStep bool) string {
	by := append([]string{"le"}, b.GroupLabels(g)...)
	if perStep {
		return agg("sum", by, b.increaseUnion(key, f, "_bucket", step))
	}
	secs := strconv.FormatFloat(step.Seconds(), 'f', -1, 64)
	return agg("sum", by, b.rateUnion(key, f, "_bucket", window)) + " * " + secs
}

// increaseUnion is rateUnion with increase() over d.
func (b Builder) increaseUnion(key SignalKey, f models.Filters, suffix string, d time.Duration) string {
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string {
		return "increase(" + selector(n+suffix, m) + "[" + model.Duration(d).String() + "])"
	})
}

// WorkloadSignals are the tokens view's series, each run on its own: mean
// prompt and generation tokens per finished request (rate of the sum over
// rate of the count), finished requests per second, the share of finished
// requests that ended in error and, where the stack runs an endpoint
// picker, the picker's own error share (see GatewayErrorShare).
func (b Builder) WorkloadSignals(g models.Grouping, f models.Filters, window string) []SignalExpr {
	return b.WorkloadSignalsScoped(g, f, models.PriorityScope{}, window)
}

// WorkloadSignalsScoped is WorkloadSignals per vLLM priority class and/or
// for some classes only (s): the token histograms and
// request_success_total carry the priority label. The endpoint picker
// knows nothing of vLLM's priorities: its error share is left out under a
// scope.
func (b Builder) WorkloadSignalsScoped(g models.Grouping, f models.Filters, s models.PriorityScope, window string) []SignalExpr {
	gl, f := b.PriorityGroupLabels(g, s), priorityFilters(f, s)
	mean := func(key SignalKey) string {
		return agg("sum", gl, b.rateUnion(key, f, "_sum", window)) + " / " + agg("sum", gl, b.rateUnion(key, f, "_count", window))
	}
	out := []SignalExpr{
		{WorkloadPromptMean, mean(RequestPromptTokens)},
		{WorkloadGenerationMean, mean(RequestGenerationTokens)},
		{WorkloadRequests, agg("sum", gl, b.youngRateUnion(RequestPromptTokens, f, "_count", window))},
		{ErrorShare, b.ErrorShare(gl, f, window)},
	}
	if s.PriorityActive() {
		return out
	}
	if gw := b.GatewayErrorShare(g, f, window); gw != "" {
		out = append(out, SignalExpr{GatewayErrorShare, gw})
	}
	return out
}

// ErrorShare is the share of finished requests that vLLM finished with an
// error, per group labels gl, over window. Engines that have no error
// reason (V0, V1 before it) add to the denominator only; a group with none
// has no series rather than a share of 0 it could not have measured.
// Client aborts are not in it: vLLM records no finished-request metric
// for them.
func (b Builder) ErrorShare(gl []string, f models.Filters, window string) string {
	return "(" + agg("sum", gl, b.rateUnion(RequestSuccess, withMatcher(f, errorReason), "", window)) + " / " +
		agg("sum", gl, b.rateUnion(RequestSuccess, f, "", window)) + ")"
}

// GatewayErrorShare is the endpoint picker's failed requests over the
// requests it routed, per model (the model the client asked for): the
// failures vLLM never sees, such as no endpoint available or a request
// rejected before it reached an engine. Only where the stack runs a
// picker (Builder.Gateway) and for groupings the picker knows (none,
// model); "" otherwise. No error series means no failure yet, so errors
// default to 0 where requests exist.
func (b Builder) GatewayErrorShare(g models.Grouping, f models.Filters, window string) string {
	if !b.Gateway || (g != models.GroupNone && g != models.GroupModel) {
		return ""
	}
	gl := b.GroupLabels(g)
	var extra []string
	if len(f.Models) > 0 {
		extra = append(extra, matchAny("model_name", f.Models))
	}
	total := b.gatewayRate(gatewayRequests, gl, window, extra)
	errs := b.gatewayRate(gatewayErrors, gl, window, extra)
	return "((" + errs + " or 0 * " + total + ") / " + total + ")"
}

// gatewayRate is the picker's counter rate per group, its current name
// preferred over the legacy one: each is summed first, so the label sets
// match and `or` keeps one (the names carry different extra labels).
func (b Builder) gatewayRate(names, gl []string, window string, extra []string) string {
	var parts []string
	for _, n := range b.gatewayNames(names) {
		parts = append(parts, agg("sum", gl, "rate("+b.ScopedSelector(n, extra...)+"["+window+"])"))
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// withMatcher is f with one more label matcher, the caller's list untouched.
func withMatcher(f models.Filters, m *labels.Matcher) models.Filters {
	out := f
	out.Labels = append(append([]*labels.Matcher(nil), f.Labels...), m)
	return out
}

// BoundCarriers are two instant expressions over key's histogram under
// the filters: per le bound, how many engines carry it, and how many
// engines export the histogram at all. vLLM sizes the length buckets by
// max_model_len (1, 2, 5, 10, … up to it), so engines serving different
// context lengths have different lists, and a sum over them undercounts at
// the bounds only some carry.
func (b Builder) BoundCarriers(key SignalKey, f models.Filters) (perBound, total string) {
	el := b.EngineLabels()
	perBound = "count by (le) (" + agg("group", append([]string{"le"}, el...), b.nameSetSelector(key, f, "_bucket")) + ")"
	total = "count(" + agg("group", el, b.nameSetSelector(key, f, "_count")) + ")"
	return perBound, total
}

// ErrorShareText is the caveat every error share carries.
func ErrorShareText(gateway bool) string {
	t := "The error share counts requests vLLM finished with finished_reason=\"error\" among all it finished. Client aborts never reach vLLM's finished-request metrics (no request_success, no latency observation), and requests that failed before reaching an engine are not vLLM's to count: client-side failures can only come from the router or gateway in front of vLLM, where it exports request and error counters."
	if gateway {
		return t + " gateway_error_share is the endpoint picker's failed requests over those it routed, per requested model."
	}
	return t
}

// AvailabilityText says what an availability objective counts.
func AvailabilityText() string {
	return "Attainment is the share of finished requests that did not end in error (vllm:request_success_total, finished_reason other than \"error\"); stop, length, abort and repetition all count as served. " + ErrorShareText(false)
}
