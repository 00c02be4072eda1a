package vllm

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file reads the slo query's ratios from the recording rules' group
// vllm.recording.slo: per engine, requests at or under an objective's
// bound and all requests (errors and all finished requests for
// availability), so any grouping the rules keep is a sum of them.

// RuleSLOWindows are the windows the slo group records: those of the
// burn-rate pairs (BurnPairs).
var RuleSLOWindows = []string{"5m", "30m", "1h", "2h", "6h", "1d", "3d"}

// ruleSLO are the latency families the slo group records, with the bound
// their numerator counts under (the default objectives': TTFT 1 s,
// inter-token latency 100 ms).
var ruleSLO = map[SignalKey]struct {
	Name  string
	Bound float64
}{TTFT: {"time_to_first_token_seconds", 1}, ITL: {"inter_token_latency_seconds", 0.1}}

// sloRuleNames are the slo group's recorded names, sorted.
func sloRuleNames(prefix string) []string {
	var out []string
	for _, w := range RuleSLOWindows {
		for _, r := range ruleSLO {
			out = append(out, prefix+"vllm_"+r.Name+"_slo_good:rate"+w, prefix+"vllm_"+r.Name+"_slo_total:rate"+w)
		}
		out = append(out, prefix+"vllm_request_success_slo_errors:rate"+w, prefix+"vllm_request_success_slo_total:rate"+w)
	}
	slices.Sort(out)
	return out
}

// recordedSLOWindow is the slo group's name of window ("1d" for "24h"),
// "" when it records none equal to it.
func recordedSLOWindow(window string) string {
	d, err := model.ParseDuration(window)
	if err != nil {
		return ""
	}
	for _, w := range RuleSLOWindows {
		if rd, _ := model.ParseDuration(w); rd == d {
			return w
		}
	}
	return ""
}

// SLORulesWhy says why the slo group cannot answer objective o at all
// ("" when it can answer some of its signals): a family it does not
// record, or a bound other than the one it counts under.
func SLORulesWhy(o Objective) string {
	if o.Key == RequestSuccess {
		return ""
	}
	r, ok := ruleSLO[o.Key]
	switch {
	case !ok:
		return "the slo rules record TTFT, inter-token latency and availability only"
	case r.Bound != o.Bound:
		return fmt.Sprintf("the slo rules count requests under the default bound %s, not %s",
			strconv.FormatFloat(r.Bound, 'f', -1, 64), strconv.FormatFloat(o.Bound, 'f', -1, 64))
	}
	return ""
}

// SLOFromRules are the slo query's signals (SLOSignals) that the slo
// group answers, by signal name: each burn pair (its windows are
// recorded), and attainment and budget when the objective's window is one
// of RuleSLOWindows. Each is the raw expression with the recorded
// per-engine rates in place of the raw rates, summed by the same
// grouping, so it answers the same question where RuleFit says the
// labels survive. Nil when SLORulesWhy gives a reason.
func (b Builder) SLOFromRules(prefix string, o Objective, g models.Grouping, f models.Filters) map[string]RulePlan {
	if SLORulesWhy(o) != "" || !RecordedGrouping(g) {
		return nil
	}
	gl, m := b.GroupLabels(g), b.matchers(f)
	ratio := func(window string) (string, []string, bool) {
		w := recordedSLOWindow(window)
		if w == "" {
			return "", nil, false
		}
		good, total := b.sloRuleRatioNames(prefix, o, w)
		goodM := m
		if o.Key != RequestSuccess {
			goodM = joinMatchers(m, "bound="+quote(strconv.FormatFloat(o.Bound, 'f', -1, 64)))
		}
		num, den := agg("sum", gl, selector(good, goodM)), agg("sum", gl, selector(total, m))
		if o.Key == RequestSuccess {
			// as ErrorShare: no attainment where no engine reports errors
			return "(1 - (" + num + " / " + den + "))", []string{good, total}, true
		}
		return "(" + num + " / " + den + ")", []string{good, total}, true
	}
	out := map[string]RulePlan{}
	for _, s := range sloSignalsWith(o, ratio) {
		out[s.Name] = RulePlan{Expr: s.Expr, Names: s.names}
	}
	return out
}

// joinMatchers adds a matcher to a rendered matcher list.
func joinMatchers(m, extra string) string {
	if m == "" {
		return extra
	}
	return m + ", " + extra
}

// sloRuleRatioNames are the recorded numerator and denominator of o's
// ratio over the recorded window w (errors and all requests for
// availability).
func (b Builder) sloRuleRatioNames(prefix string, o Objective, w string) (string, string) {
	if o.Key == RequestSuccess {
		return prefix + "vllm_request_success_slo_errors:rate" + w, prefix + "vllm_request_success_slo_total:rate" + w
	}
	n := prefix + "vllm_" + ruleSLO[o.Key].Name
	return n + "_slo_good:rate" + w, n + "_slo_total:rate" + w
}
