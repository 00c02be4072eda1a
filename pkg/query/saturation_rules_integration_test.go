//go:build !mutation

package query_test

import (
	"context"
	"math"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// saturationRuleCases run on TestRulesExactness' fleet shape: cluster "a"
// servers without pod labels, cluster "b" servers with namespace and pod.
var saturationRuleCases = []ruleCase{
	{"saturation by pod", `{"queryType":"saturation","grouping":"instance","format":"series"}`, `,"instanceLabel":"pod"`, true},
	{"saturation by pod and engine, filtered to a cluster, series and table",
		`{"queryType":"saturation","grouping":"instance_engine","format":"both","matchers":"cluster=\"b\""}`, `,"instanceLabel":"pod"`, true},
	{"saturation by pod under a cluster selector", `{"queryType":"saturation","grouping":"instance","format":"series"}`,
		`,"instanceLabel":"pod","selector":"cluster=\"b\""`, true},
	{"saturation by instance, which pods' recorded series lose", `{"queryType":"saturation","grouping":"instance","format":"series"}`, "", false},
	{"saturation under a matcher the rules drop", `{"queryType":"saturation","grouping":"instance","format":"series","matchers":"job=\"vllm\""}`,
		`,"instanceLabel":"pod"`, false},
}

// checkSaturationRules checks the saturation query on rules (issue 22
// item 3) on one back end of TestRulesExactness, on its fleet, backfill,
// 5s-evaluated rule file, 15s step and 1m window, with its tolerances:
// with rules on, the preemption and completion rates are read from the
// recorded rates, the stall signal's inputs from the stall group, and each equals its raw expression at the rules' latest
// evaluation at or before each step; every other signal is the raw
// expression; the answer has the raw answer's series and steps. Where the
// rules cannot answer (a label they drop), and with rules off, the plan is
// raw. On Prometheus 3 it also logs how far the gauge signals would be
// from raw if read from the recorded gauges (why they stay raw).
func checkSaturationRules(t *testing.T, k promtest.Kind, c *prom.Client, url string, from, to time.Time) {
	for _, sc := range saturationRuleCases {
		t.Run(sc.name, func(t *testing.T) {
			checkRuleCase(t, url, sc, from, to)
			if sc.onRules {
				checkSaturationSignals(t, url, sc, from, to)
			}
		})
	}
	if k == promtest.Prometheus3 {
		t.Run("gauge signals stay raw", func(t *testing.T) { logGaugesFromRules(t, c, from, to) })
	}
}

// checkSaturationSignals: on rules, exactly the preemption and completion
// rates and the stall signal (its inputs, at the default 3m stall window)
// moved to the recorded series (the other expressions are the raw
// plan's, in the same order), and the notice names them.
func checkSaturationSignals(t *testing.T, url string, c ruleCase, from, to time.Time) {
	t.Helper()
	on := settingsExecutor(t, url, `{"scrapeInterval":"15s"`+c.settings+`}`)
	off := settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false`+c.settings+`}`)
	q := dq("A", c.query, from, to)
	q.Interval = 15 * time.Second
	rOn, rOff := run(t, on, q).Responses["A"], run(t, off, q).Responses["A"]
	require.NoError(t, rOn.Error)
	require.NoError(t, rOff.Error)
	raw, rules := expressions(rOff.Frames), expressions(rOn.Frames)
	require.Equal(t, len(raw), len(rules))
	var moved []string
	for i := range rules {
		if rules[i] != raw[i] {
			moved = append(moved, ruleNameRE.FindString(rules[i]))
		}
	}
	require.Equal(t, []string{"engine:vllm_num_preemptions:rate1m", "engine:vllm_request_success:rate1m",
		"engine:vllm_num_requests_running:min_over_time3m"}, moved)
	require.Contains(t, noticeTexts(rOn.Frames), "Read from them: completions, preemptions, stalled; every other saturation signal from raw series.")
}

// gaugeRewrites are the saturation gauge signals (by pod, 1m window) next
// to what reading them from the recorded gauges would be: the evidence
// for vllm.SaturationRawWhy.
var gaugeRewrites = []struct{ signal, raw, rules string }{
	{vllm.SatWaiting, "sum by (pod) (avg_over_time(vllm:num_requests_waiting[1m]))",
		"sum by (pod) (avg_over_time(engine:vllm_num_requests_waiting:sum[1m]))"},
	{vllm.SatRunning, "sum by (pod) (avg_over_time(vllm:num_requests_running[1m]))",
		"sum by (pod) (avg_over_time(engine:vllm_num_requests_running:sum[1m]))"},
	{vllm.SatRunningPeak, "sum by (pod) (max_over_time(vllm:num_requests_running[1m]))",
		"sum by (pod) (max_over_time(engine:vllm_num_requests_running:sum[1m]))"},
	{vllm.SatKVUsage, "max by (pod) (max_over_time(vllm:kv_cache_usage_perc[1m]))",
		"max by (pod) (max_over_time(engine:vllm_kv_cache_usage_perc:max[1m]))"},
	{vllm.SatQueued, "(sum by (pod) (delta(vllm:num_requests_waiting[1m])) + sum by (pod) (delta(vllm:num_requests_running[1m]))) / 60",
		"(sum by (pod) (delta(engine:vllm_num_requests_waiting:sum[1m])) + sum by (pod) (delta(engine:vllm_num_requests_running:sum[1m]))) / 60"},
}

// logGaugesFromRules logs, per gauge signal, how many steps of the
// recorded rewrite differ from the raw expression at the rules' latest
// evaluation, and by how much at worst (relative to the larger of the
// two). Logged, not asserted: how far
// they are depends on the traffic, not on the plugin.
func logGaugesFromRules(t *testing.T, c *prom.Client, from, to time.Time) {
	ctx := context.Background()
	step := 15 * time.Second
	from = from.Truncate(step).Add(step)
	for _, g := range gaugeRewrites {
		lag := ruleLag(t, c, g.rules, from)
		got, _, err := c.QueryRange(ctx, g.rules, v1.Range{Start: from, End: to, Step: step})
		require.NoError(t, err)
		want, _, err := c.QueryRange(ctx, g.raw, v1.Range{Start: from.Add(-lag), End: to.Add(-lag), Step: step})
		require.NoError(t, err)
		w, gs := bySeries(want), bySeries(got)
		n, differ, worst := 0, 0, 0.0
		for k, ws := range w {
			s, ok := gs[k]
			if !ok {
				continue
			}
			for j := range min(len(ws.Values), len(s.Values)) {
				d := math.Abs(s.Values[j]-ws.Values[j]) / math.Max(1e-9, math.Max(math.Abs(ws.Values[j]), math.Abs(s.Values[j])))
				n++
				if d > 1e-9 {
					differ++
					worst = max(worst, d)
				}
			}
		}
		t.Logf("%s from the recorded gauges: %d of %d steps differ from raw, worst relative difference %.3g", g.signal, differ, n, worst)
	}
}
