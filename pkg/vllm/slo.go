package vllm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// SLOFamilies maps the slo query's families to catalogue signals.
var SLOFamilies = map[string]SignalKey{"ttft": TTFT, "itl": ITL, "e2e": E2E, "queue_time": QueueTime}

// LatencyBuckets are the finite upper bounds vLLM's latency histograms
// have, the newest lists (vLLM ≥ 0.8.4, both generations; older releases
// have a prefix of each list). The test checks them against the reference
// table in testdata. An objective's threshold must be one of them: a
// histogram cannot tell how many requests fell under any other value.
var LatencyBuckets = map[SignalKey][]float64{
	TTFT: {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
	ITL: {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
		20.0, 40.0, 80.0},
	QueueTime: requestLatencyBuckets,
	E2E:       requestLatencyBuckets,
}

var requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
	60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}

// SnapBound returns the default bound of key nearest to threshold (the
// lower one on a tie: the stricter objective) and whether it differs. A
// query snaps to the bounds the store has (Bounds.Snap); this is for when
// it cannot ask.
func SnapBound(key SignalKey, threshold float64) (float64, bool) {
	return DefaultBounds(key).Snap(threshold)
}

// BoundsText lists the default bounds of key for notices: "0.001, 0.005, …".
func BoundsText(key SignalKey) string { return DefaultBounds(key).Text() }

// LeForms are the ways an le label can spell bound: "1" as Go clients and
// Prometheus 2 keep it, "1.0" as Python's prometheus_client (vLLM) writes
// it and Prometheus 3 rewrites every le on ingestion. A matcher on le must
// accept both, or an upgrade silently empties it.
func LeForms(bound float64) []string {
	short := strconv.FormatFloat(bound, 'f', -1, 64)
	if strings.ContainsAny(short, ".eE") {
		return []string{short}
	}
	return []string{short, short + ".0"}
}

// leMatcher matches the le label of bound in any of its spellings.
func leMatcher(bound float64) *labels.Matcher { return leMatcherOf(LeForms(bound)) }

// leMatcherOf matches the le label against the spellings given.
func leMatcherOf(spellings []string) *labels.Matcher {
	forms := append([]string(nil), spellings...)
	for i, f := range forms {
		forms[i] = regexp.QuoteMeta(f)
	}
	return labels.MustNewMatcher(labels.MatchRegexp, "le", strings.Join(forms, "|"))
}

// BurnPair is one multi-window burn-rate alert of Google's SRE workbook
// (chapter 5, "Alerting on SLOs"): it fires when the burn rate over both
// the long and the short window exceeds Factor.
type BurnPair struct {
	Long, Short string
	Factor      float64
	// Budget is the share of a 30-day error budget spent when the alert
	// fires at the threshold over the long window.
	Budget   string
	Severity string
}

// BurnPairs are the workbook's recommended pairs.
var BurnPairs = []BurnPair{
	{Long: "1h", Short: "5m", Factor: 14.4, Budget: "2%", Severity: "page"},
	{Long: "6h", Short: "30m", Factor: 6, Budget: "5%", Severity: "page"},
	{Long: "1d", Short: "2h", Factor: 3, Budget: "10%", Severity: "ticket"},
	{Long: "3d", Short: "6h", Factor: 1, Budget: "10%", Severity: "ticket"},
}

// Name is the SignalTagLabel of the pair's series: "burn_1h_5m".
func (p BurnPair) Name() string { return "burn_" + p.Long + "_" + p.Short }

// Objective is an SLO as the builder needs it: the family's signal, the
// threshold already on a bucket bound, the target and the window. An
// availability objective has Key RequestSuccess and no bound: its good
// requests are the finished ones that did not end in error.
type Objective struct {
	Key    SignalKey
	Bound  float64
	Target float64
	Window string
	// Le are the spellings of Bound the le matcher accepts; empty means
	// LeForms(Bound).
	Le []string
}

// leMatcher matches the objective's bound in every spelling it has.
func (o Objective) leMatcher() *labels.Matcher {
	if len(o.Le) == 0 {
		return leMatcher(o.Bound)
	}
	return leMatcherOf(o.Le)
}

// SLOSignals are the slo query's expressions, each run on its own:
// attainment (the share of requests at or under the bound over the
// window), the error budget left (1 − errors ÷ allowed errors) and, per
// burn pair, the smaller of its two burn rates: the pair's alert fires
// exactly when that series exceeds the pair's factor.
func (b Builder) SLOSignals(o Objective, g models.Grouping, f models.Filters) []SignalExpr {
	return b.sloSignals(o, b.GroupLabels(g), f)
}

// SLOSignalsScoped is SLOSignals per vLLM priority class and/or for some
// classes only (s): every family an objective reads (the latency
// histograms, request_success_total) carries the priority label.
func (b Builder) SLOSignalsScoped(o Objective, g models.Grouping, f models.Filters, s models.PriorityScope) []SignalExpr {
	return b.sloSignals(o, b.PriorityGroupLabels(g, s), priorityFilters(f, s))
}

// sloSignals builds the raw slo signals over the grouping labels gl.
func (b Builder) sloSignals(o Objective, gl []string, f models.Filters) []SignalExpr {
	sigs := sloSignalsWith(o, func(window string) (string, []string, bool) { return b.sloRatio(o, gl, f, window), nil, true })
	out := make([]SignalExpr, len(sigs))
	for i, s := range sigs {
		out[i] = s.SignalExpr
	}
	return out
}

// sloSignal is one slo signal and the recorded names it reads (none raw).
type sloSignal struct {
	SignalExpr
	names []string
}

// sloRatioFn gives the share of good requests over a window, the
// recorded names it reads, and whether it can (a window no rule records
// cannot).
type sloRatioFn func(window string) (expr string, names []string, ok bool)

// sloSignalsWith builds the slo signals on the ratios ratio gives,
// leaving out each signal one of whose ratios cannot be given.
func sloSignalsWith(o Objective, ratio sloRatioFn) []sloSignal {
	budget := strconv.FormatFloat(1-o.Target, 'g', 12, 64)
	var out []sloSignal
	if att, names, ok := ratio(o.Window); ok {
		out = append(out, sloSignal{SignalExpr{"attainment", att}, names},
			sloSignal{SignalExpr{"error_budget_left", fmt.Sprintf("1 - (1 - %s) / %s", att, budget)}, names})
	}
	for _, p := range BurnPairs {
		l, ln, okL := ratio(p.Long)
		s, sn, okS := ratio(p.Short)
		if !okL || !okS {
			continue
		}
		long := fmt.Sprintf("(1 - %s) / %s", l, budget)
		short := fmt.Sprintf("(1 - %s) / %s", s, budget)
		// (long < short) or short: the element-wise minimum.
		out = append(out, sloSignal{SignalExpr{p.Name(), fmt.Sprintf("((%s) < (%s)) or (%s)", long, short, short)}, append(ln, sn...)})
	}
	return out
}

// Availability is the objective that Target of the finished requests do
// not end in error over window.
func Availability(target float64, window string) Objective {
	return Objective{Key: RequestSuccess, Target: target, Window: window}
}

// sloRatio is the share of requests at or under the bound over window:
// the rate of the bound's bucket over the rate of all requests. For an
// availability objective it is 1 − the error share (ErrorShare), so a
// group whose engines cannot report errors (V0) shows no attainment
// rather than a perfect one.
func (b Builder) sloRatio(o Objective, gl []string, f models.Filters, window string) string {
	if o.Key == RequestSuccess {
		return "(1 - " + b.ErrorShare(gl, f, window) + ")"
	}
	good := f
	good.Labels = append(append([]*labels.Matcher(nil), f.Labels...), o.leMatcher())
	return "(" + agg("sum", gl, b.rateUnion(o.Key, good, "_bucket", window)) + " / " +
		agg("sum", gl, b.rateUnion(o.Key, f, "_count", window)) + ")"
}
