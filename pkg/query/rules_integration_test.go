//go:build !mutation

package query_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// ruleTestEvery is the evaluation interval of the test copy of the rule
// file (30s shipped): the test's queries step 15s, a multiple of it.
const ruleTestEvery = 5 * time.Second

// ruleCase is one query asked with rules on and off.
type ruleCase struct {
	name, query string
	// settings are jsonData besides scrapeInterval and recordingRules.
	settings string
	// onRules: whether the rules may answer it (else both plans are raw).
	onRules bool
}

// ruleCases run on a fleet whose cluster "b" servers carry namespace and
// pod labels (as on Kubernetes) and whose cluster "a" servers do not: the
// recorded series of the first keep pod and lose instance.
var ruleCases = []ruleCase{
	{"ttft quantiles by pod", `{"queryType":"waitTime","family":"ttft","quantiles":[0.5,0.9,0.99],"grouping":"instance"}`, `,"instanceLabel":"pod"`, true},
	{"queue time by model", `{"queryType":"waitTime","family":"queue_time","quantiles":[0.99],"grouping":"model"}`, "", true},
	{"e2e fleet-wide", `{"queryType":"waitTime","family":"e2e","quantiles":[0.5],"grouping":"none"}`, "", true},
	{"itl by pod and engine, filtered to a cluster", `{"queryType":"waitTime","family":"itl","quantiles":[0.95],"grouping":"instance_engine","matchers":"cluster=\"b\""}`, `,"instanceLabel":"pod"`, true},
	{"ttft under a cluster selector", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`, `,"selector":"cluster=\"a\""`, true},
	{"queue by pod", `{"queryType":"queue","grouping":"instance"}`, `,"instanceLabel":"pod"`, true},
	{"queue by model", `{"queryType":"queue","grouping":"model"}`, "", true},
	{"topK by waiting per pod", `{"queryType":"topk","rankBy":"waiting","k":10,"aggregation":"max","grouping":"instance","format":"series"}`, `,"instanceLabel":"pod"`, true},
	{"topK by queue-time p99 per pod and engine", `{"queryType":"topk","rankBy":"wait_p99","k":10,"aggregation":"avg","grouping":"instance_engine","format":"series"}`, `,"instanceLabel":"pod"`, true},
	{"topK by KV usage, which no rule records exactly", `{"queryType":"topk","rankBy":"kv_usage","k":10,"grouping":"instance","format":"series"}`, `,"instanceLabel":"pod"`, false},
	{"by instance, which pods' recorded series lose", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"instance"}`, "", false},
	{"a job selector the rules sum away", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`, `,"selector":"job=\"vllm\""`, false},
	{"a matcher on a label the rules drop", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model","matchers":"job=\"vllm\""}`, "", false},
	// The preemption rate corrects series younger than its window, which
	// the recorded rates cannot (preemptionRate in preemptions.go): raw by
	// model and by pod too.
	{"preemption rate by model, corrected for young series", `{"queryType":"preemptions","asSeries":true,"grouping":"model"}`, "", false},
	{"preemption rate by pod, corrected for young series", `{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`, `,"instanceLabel":"pod"`, false},
	{"slo: TTFT burn pairs by model", `{"queryType":"slo","family":"ttft","threshold":1,"target":0.99,"window":"28d","grouping":"model"}`, "", true},
	{"slo: inter-token burn pairs by pod and engine", `{"queryType":"slo","family":"itl","threshold":0.1,"target":0.99,"window":"1d","grouping":"instance_engine"}`,
		`,"instanceLabel":"pod"`, true},
	{"slo: availability fleet-wide over 1h", `{"queryType":"slo","objective":"availability","target":0.999,"window":"1h","grouping":"none"}`, "", true},
	{"slo: a bound the rules do not count", `{"queryType":"slo","family":"ttft","threshold":0.5,"target":0.99,"window":"28d","grouping":"model"}`, "", false},
	{"preemption rate under a matcher the rules drop", `{"queryType":"preemptions","asSeries":true,"grouping":"model","matchers":"job=\"vllm\""}`, "", false},
}

// TestRulesExactness checks issue 22 item 3 on Prometheus 2 and 3 and
// VictoriaMetrics: with the shipped recording rules' series in the store,
// the plugin's rules-backed answer has the raw answer's series and steps,
// and its values equal the raw expressions' at the rules' evaluation times
// (within float tolerance), for histogram quantiles, groupings, a filter
// and a scoping selector; where the rules cannot answer, and with
// recordingRules off, the plan is raw. Discovery finds every name and the
// interval.
//
// The rule series are evaluated after the fact over the scraped range, by
// promtool (BackfillRules) and vmalert's replay mode (ReplayRules), from a
// copy of the rule file evaluated every 5s: a live group can evaluate a
// few milliseconds before a scrape stamped earlier is stored, and then
// differs from any later raw query.
func TestRulesExactness(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.HotFleet(22))
	tg := env.Targets()
	groups := []promtest.Group{{Targets: tg[:2], Labels: map[string]string{"cluster": "a"}}}
	for i, addr := range tg[2:] {
		groups = append(groups, promtest.Group{Targets: []string{addr},
			Labels: map[string]string{"cluster": "b", "namespace": "inference", "pod": fmt.Sprintf("vllm-%d", i)}})
	}
	servers := map[promtest.Kind]*promtest.Server{}
	for _, k := range promtest.Kinds() {
		o := promtest.Options{Groups: groups, Backend: k}
		if k != promtest.VictoriaMetrics {
			o.Args = []string{"--web.enable-admin-api"} // for BackfillRules' snapshot
		}
		servers[k] = promtest.Start(t, o)
	}
	ruleFile := promtest.RuleFileEvery(t, ruleTestEvery)
	// Wedge the pod vllm-1 (both engines) early, so that the recorded stall
	// state over 1m has stalled engines to compare by the time the rules
	// are evaluated (its 3m and 5m windows have not been reported long
	// enough: 0 there).
	time.Sleep(time.Until(env.Started.Add(30 * time.Second)))
	require.NoError(t, env.Fleet.Wedge(3))
	time.Sleep(time.Until(env.Started.Add(150 * time.Second)))
	bfStart := env.Started.Add(5 * time.Second).Truncate(ruleTestEvery).Add(ruleTestEvery)
	bfEnd := time.Now().Add(-5 * time.Second).Truncate(ruleTestEvery)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			vmIdleP99 = k == promtest.VictoriaMetrics
			srv := servers[k]
			// The last evaluation may fall before bfEnd (promtool stops short
			// of its end), so the queries end an interval earlier.
			if k == promtest.VictoriaMetrics {
				srv.ReplayRules(t, ruleFile, bfStart, bfEnd)
			} else {
				srv.BackfillRules(t, ruleFile, bfStart, bfEnd)
			}
			c, err := prom.New(prom.Options{URL: srv.URL})
			require.NoError(t, err)
			rs := query.NewRuleDiscovery(c, vllm.Builder{}, "engine:", time.Now).Get(context.Background())
			require.Len(t, rs.Present, len(vllm.RuleNames("engine:")), "discovery finds every recorded name")
			require.Equal(t, ruleTestEvery, rs.Interval, "discovery measures the interval")
			require.True(t, rs.PodSeries, "discovery sees the pod-labelled series")
			s, err := models.ParseSettings(models.Instance{URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)})
			require.NoError(t, err)
			require.Contains(t, health.Check(context.Background(), c, s, time.Now()).Message, "Recording rules: 145 of 145 present, every 5s")
			for _, c := range ruleCases {
				t.Run(c.name, func(t *testing.T) {
					checkRuleCase(t, srv.URL, c, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
				})
			}
			t.Run("fleet table", func(t *testing.T) {
				checkFleet(t, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
			})
			t.Run("fleet table on the per-engine p99s", func(t *testing.T) {
				checkFleetP99(t, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
			})
			t.Run("waitTime on the recorded quantiles", func(t *testing.T) {
				checkWaitQuantiles(t, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
			})
			t.Run("recorded wait quantiles", func(t *testing.T) {
				checkWaitQuantilePairs(t, c, srv.URL, bfEnd.Add(-ruleTestEvery))
			})
			t.Run("stall inputs", func(t *testing.T) {
				checkStallInputs(t, c, srv.URL, bfEnd.Add(-ruleTestEvery))
			})
			t.Run("stall state", func(t *testing.T) {
				checkStallState(t, c, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
			})
			t.Run("saturation", func(t *testing.T) {
				checkSaturationRules(t, k, c, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
			})
			t.Run("capacity rules' closed form", func(t *testing.T) {
				checkCapacityRules(t, c, bfEnd.Add(-ruleTestEvery))
			})
			if k == promtest.Prometheus3 {
				t.Run("nearest", func(t *testing.T) {
					checkNearest(t, srv.URL, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
				})
			}
		})
	}
}

// checkFleet asks the fleet table with rules on and off (by pod, which
// both label shapes' recorded series keep): on rules, the load gauges,
// rates and p99s are read from the recorded series, and each equals its
// raw twin evaluated at the rules' latest evaluation at or before the
// table's instant.
func checkFleet(t *testing.T, url string, from, to time.Time) {
	checkFleetWith(t, url, `,"instanceLabel":"pod"`, from, to)
}

// checkFleetP99 asks the fleet table scoped to the pod-labelled cluster,
// where each engine's labels hold one recorded p99 series: the queue-time
// and TTFT p99 columns read the engine_p99 group (one series per engine)
// and the stall state the stall group, and each equals its raw twin. On
// both clusters (checkFleet) the cluster-a servers have no pod label, so
// their recorded p99s share pod="" and the table reads the bucket rates.
func checkFleetP99(t *testing.T, url string, from, to time.Time) {
	ex := checkFleetWith(t, url, `,"instanceLabel":"pod","selector":"cluster=\"b\""`, from, to)
	require.Contains(t, ex, "engine:vllm_request_queue_time_seconds:p99_rate1m")
	require.Contains(t, ex, "engine:vllm_time_to_first_token_seconds:p99_rate1m")
	require.Contains(t, ex, "engine:vllm_stalled:3m{")
	both := checkFleetWith(t, url, `,"instanceLabel":"pod"`, from, to)
	require.NotContains(t, both, ":p99_rate1m", "pod-less servers share pod=\"\": a recorded quantile cannot sum them")
	require.Contains(t, both, "engine:vllm_request_queue_time_seconds_bucket:rate1m")
	require.NotContains(t, both, "engine:vllm_stalled:", "pod-less servers share pod=\"\": the recorded state is per server")
	require.Contains(t, both, "engine:vllm_num_requests_running:min_over_time3m", "the recorded inputs sum exactly")
}

// checkStallState asks the fleet table for each recorded stall window,
// scoped to the pod-labelled cluster (one recorded server per pod): the
// stall column reads the recorded state, and it equals the raw stall
// column (StalledSeen by the engine labels) at the rules' latest
// evaluation; the wedged pod's loaded engines are stalled over 1m.
func checkStallState(t *testing.T, c *prom.Client, url string, from, to time.Time) {
	stalled := 0
	for _, w := range vllm.RuleStallWindows {
		settings := fmt.Sprintf(`,"instanceLabel":"pod","selector":"cluster=\"b\"","stallWindow":%q`, vllm.ShortDuration(w))
		ex := checkFleetWith(t, url, settings, from, to)
		name := vllm.StallStateName("engine:", w)
		require.Contains(t, ex, name+"{", "the stall column reads the recorded state over %s", w)
		s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(`{"scrapeInterval":"1s"` + settings + `}`)})
		require.NoError(t, err)
		b := vllm.ForSettings(s)
		rp, ok := b.StalledStateFromRules("engine:", models.Filters{}, w)
		require.True(t, ok)
		at := to.Truncate(15 * time.Second)
		lag := ruleLag(t, c, rp.Expr, at)
		got, _, err := c.Query(context.Background(), rp.Expr, at)
		require.NoError(t, err)
		want, _, err := c.Query(context.Background(), b.StalledSeen(b.EngineLabels(), models.Filters{}, w), at.Add(-lag))
		require.NoError(t, err)
		requireSameVector(t, want, got, rp.Expr)
		shared, _, err := c.Query(context.Background(), b.StallStateShared("engine:", w), at)
		require.NoError(t, err)
		require.Empty(t, shared, "one server per pod in cluster b")
		if w == time.Minute {
			stalled = len(got)
		}
	}
	require.Positive(t, stalled, "the wedged pod's engines holding requests are stalled over 1m")
}

// checkStallInputs: each of the stall condition's inputs, summed per
// engine (pod identity, so the pod-less servers sum into pod=""), read
// from the stall group equals its raw twin at the rules' latest
// evaluation, for every recorded stall window.
func checkStallInputs(t *testing.T, c *prom.Client, url string, at time.Time) {
	s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(`{"scrapeInterval":"1s","instanceLabel":"pod"}`)})
	require.NoError(t, err)
	b := vllm.ForSettings(s)
	compared, nonzero := 0, 0
	for _, w := range vllm.RuleStallWindows {
		pairs := b.StallInputPairs("engine:", b.EngineLabels(), models.Filters{}, w)
		require.Len(t, pairs, 5)
		for _, p := range pairs {
			lag := ruleLag(t, c, p.Rules, at)
			got, _, err := c.Query(context.Background(), p.Rules, at)
			require.NoError(t, err)
			want, _, err := c.Query(context.Background(), p.Raw, at.Add(-lag))
			require.NoError(t, err)
			compared += requireSameVector(t, want, got, p.Rules)
			for _, v := range got {
				if v.Value != 0 {
					nonzero++
				}
			}
		}
	}
	require.Positive(t, compared, "some values compared")
	require.Positive(t, nonzero, "some inputs are not zero")
}

// checkFleetWith is checkFleet under the data source settings (JSON
// members after the scrape interval).
func checkFleetWith(t *testing.T, url, settings string, from, to time.Time) string {
	on := settingsExecutor(t, url, `{"scrapeInterval":"15s"`+settings+`}`)
	off := settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false`+settings+`}`)
	q := dq("A", `{"queryType":"fleet"}`, from, to)
	q.Interval = 15 * time.Second // step 15s, $__rate_interval 1m
	rOn, rOff := run(t, on, q).Responses["A"], run(t, off, q).Responses["A"]
	require.NoError(t, rOn.Error)
	require.NoError(t, rOff.Error)
	require.NotContains(t, executed(rOff.Frames), "engine:")
	require.Contains(t, executed(rOn.Frames), "engine:vllm_num_requests_running:sum")
	require.Contains(t, noticeTexts(rOn.Frames), "Answered from recording rules (engine:…, every 5s)")
	require.Equal(t, rOff.Frames[0].Rows(), rOn.Frames[0].Rows(), "the same engines")
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	at := to.Truncate(15 * time.Second) // the table's instant: the range end, aligned to the step
	raw, rules := withoutEvidence(expressions(rOff.Frames)), withoutEvidence(expressions(rOn.Frames))
	require.Equal(t, len(raw), len(rules), "raw:\n%s\nrules:\n%s", strings.Join(raw, "\n"), strings.Join(rules, "\n"))
	compared := 0
	for i := range rules {
		if rules[i] == raw[i] {
			continue
		}
		lag := ruleLag(t, c, rules[i], at)
		got, _, err := c.Query(context.Background(), rules[i], at)
		require.NoError(t, err)
		want, _, err := c.Query(context.Background(), raw[i], at.Add(-lag))
		require.NoError(t, err)
		if vmIdleP99 && strings.Contains(rules[i], ":p99_") {
			got = withoutIdle(t, want, got, rules[i])
		}
		compared += requireSameVector(t, want, got, rules[i])
	}
	require.Positive(t, compared, "some values compared")
	return executed(rOn.Frames)
}

// withoutEvidence drops the fleet table's version-evidence expression,
// which the table asks only when an engine lacks a checked column: a
// wedged engine's p99s have no finished request to go by, and
// VictoriaMetrics answers the raw quantile with nothing where the rules
// recorded NaN (or the other way round), so one plan asks it and the
// other does not. The rows are compared all the same.
func withoutEvidence(exprs []string) []string {
	out := exprs[:0:0]
	for _, e := range exprs {
		if !strings.Contains(e, "request_inference_time_seconds_count|") {
			out = append(out, e)
		}
	}
	return out
}

// requireSameVector: the same series with values within a relative 1e-9
// (NaN where the other is NaN).
func requireSameVector(t *testing.T, want, got model.Vector, expr string) int {
	t.Helper()
	w, g := map[string]float64{}, map[string]float64{}
	for _, s := range want {
		w[s.Metric.String()] = float64(s.Value)
	}
	for _, s := range got {
		g[s.Metric.String()] = float64(s.Value)
	}
	dropLoneNaNs(w, g)
	require.Equal(t, sortedKeys(w), sortedKeys(g), "%s: same series", expr)
	for k, wv := range w {
		if math.IsNaN(wv) {
			require.True(t, math.IsNaN(g[k]), "%s %s: NaN", expr, k)
			continue
		}
		require.InDelta(t, wv, g[k], 1e-9*math.Max(1, math.Abs(wv)), "%s %s", expr, k)
	}
	return len(w)
}

// vmIdleP99 is set while the VictoriaMetrics subtests run: there the raw
// quantile or mean of an engine without a finished request in its window
// (the wedged pod's, or its server's) has no sample, while the recorded
// one (vmalert's replay) has one. A known gap of the engine_p99 and
// wait_quantiles groups on VictoriaMetrics, logged by withoutIdle, not
// hidden: every engine and server with requests is compared.
var vmIdleP99 bool

// withoutIdle drops from got the series want lacks, logging each.
func withoutIdle(t *testing.T, want, got model.Vector, expr string) model.Vector {
	has := map[string]bool{}
	for _, s := range want {
		has[s.Metric.String()] = true
	}
	out := got[:0:0]
	for _, s := range got {
		if has[s.Metric.String()] {
			out = append(out, s)
			continue
		}
		t.Logf("VictoriaMetrics: %s has %s = %v where the raw quantile has no sample (an engine without finished requests)", expr, s.Metric, s.Value)
	}
	return out
}

// dropLoneNaNs forgets a NaN sample whose series the other answer lacks:
// both are the same empty cell in every table. VictoriaMetrics answers
// the quantile of an engine without a finished request in the window (a
// wedged one) with no sample raw, where its recorded quantile keeps NaN.
func dropLoneNaNs(a, b map[string]float64) {
	for _, m := range [][2]map[string]float64{{a, b}, {b, a}} {
		for k, v := range m[0] {
			if _, ok := m[1][k]; !ok && math.IsNaN(v) {
				delete(m[0], k)
			}
		}
	}
}

// checkNearest is the nearest policy on Prometheus 3: a step (17s) that is
// not a multiple of the 5s interval and a rate window (48s with a 12s
// scrape) no rule records. Exact plans it raw; nearest reads the 1m rules,
// says so with the window and the staleness bound, and its answer is the
// raw expression over the recorded 1m window, each step read at the rules'
// latest evaluation at or before it (exactly: this is what nearest
// promises). How far that is from the raw 48s answer depends on the
// traffic, not on the plugin, so it is logged, not asserted (runs saw
// 0.13-0.30 relative at worst).
func checkNearest(t *testing.T, url string, from, to time.Time) {
	set := `{"scrapeInterval":"12s","recordingRules":"%s"}`
	q := dq("A", `{"queryType":"waitTime","family":"e2e","quantiles":[0.5],"grouping":"none"}`, from, to)
	// Grafana's interval 17s: the step; $__rate_interval is then
	// max(17s + 12s, 4 × 12s) = 48s, and 1m spans five 12s scrapes.
	q.Interval = 17 * time.Second
	resp := map[string]backend.DataResponse{}
	for _, p := range []string{"off", "exact", "nearest"} {
		resp[p] = run(t, settingsExecutor(t, url, fmt.Sprintf(set, p)), q).Responses["A"]
		require.NoError(t, resp[p].Error, p)
		require.NotEmpty(t, resp[p].Frames, p)
	}
	require.NotContains(t, executed(resp["exact"].Frames), "engine:", "exact leaves a 17s step and a 48s window raw")
	require.Contains(t, executed(resp["nearest"].Frames), "engine:vllm_e2e_request_latency_seconds_bucket:rate1m")
	require.Contains(t, noticeTexts(resp["nearest"].Frames), "close rather than exact (recordingRules nearest): rate window 1m for the query's 48s "+
		"(the nearest recorded, within 2.5×); each step shows the rules' latest evaluation, at most 5s before it.")
	requireSameShape(t, resp["off"].Frames, resp["nearest"].Frames)
	checkNearestIsRawOverOneMinute(t, url, resp["off"].Frames, resp["nearest"].Frames)
	raw, near := frameIndex(resp["off"].Frames), frameIndex(resp["nearest"].Frames)
	compared, worst := 0, 0.0
	for k, rf := range raw {
		for i := range rf.Rows() {
			w, errW := rf.Fields[1].FloatAt(i)
			g, errG := near[k].Fields[1].FloatAt(i)
			require.NoError(t, errW)
			require.NoError(t, errG)
			if math.IsNaN(w) || math.IsNaN(g) || w == 0 {
				continue
			}
			worst = max(worst, math.Abs(g-w)/math.Abs(w))
			compared++
		}
	}
	t.Logf("nearest (1m window) vs raw (48s window): %d values, worst relative difference %.3f", compared, worst)
	require.Positive(t, compared, "some values compared")
}

// checkNearestIsRawOverOneMinute: at every step T of the nearest answer,
// its expression equals the raw expression with the recorded 1m window in
// place of the query's 48s, evaluated at the rules' latest evaluation at
// or before T (a 17s step is not a multiple of the 5s interval, so the lag
// differs from step to step).
func checkNearestIsRawOverOneMinute(t *testing.T, url string, off, near data.Frames) {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	rawExpr, nearExpr := expressions(off)[0], expressions(near)[0]
	oneMinute := strings.ReplaceAll(rawExpr, "[48s]", "[1m]")
	require.NotEqual(t, rawExpr, oneMinute, "the raw expression reads a 48s window: %s", rawExpr)
	times := near[0].Fields[0]
	compared := 0
	for i := range times.Len() {
		at := times.At(i).(time.Time)
		lag := ruleLag(t, c, nearExpr, at)
		got, _, err := c.Query(context.Background(), nearExpr, at)
		require.NoError(t, err)
		want, _, err := c.Query(context.Background(), oneMinute, at.Add(-lag))
		require.NoError(t, err)
		compared += requireSameVector(t, want, got, nearExpr)
	}
	require.Positive(t, compared, "some values compared")
}

// checkRuleCase asks c with rules on and off and compares the answers;
// it returns the rules-on answer's executed query.
func checkRuleCase(t *testing.T, url string, c ruleCase, from, to time.Time) string {
	on := settingsExecutor(t, url, `{"scrapeInterval":"15s"`+c.settings+`}`)
	off := settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false`+c.settings+`}`)
	q := dq("A", c.query, from, to)
	// Grafana's interval 15s: the step, three evaluations; $__rate_interval
	// is then max(15s + 15s, 4 × 15s) = 1m, the recorded window.
	q.Interval = 15 * time.Second
	rOn, rOff := run(t, on, q).Responses["A"], run(t, off, q).Responses["A"]
	require.NoError(t, rOn.Error)
	require.NoError(t, rOff.Error)
	require.NotEmpty(t, rOff.Frames)
	require.NotContains(t, executed(rOff.Frames), "engine:", "recordingRules off plans raw")
	if !c.onRules {
		require.NotContains(t, executed(rOn.Frames), "engine:", "the rules cannot answer this exactly")
		return executed(rOn.Frames)
	}
	require.Contains(t, executed(rOn.Frames), "engine:vllm_", "planned on rules")
	require.Contains(t, noticeTexts(rOn.Frames), "Answered from recording rules (engine:…, every 5s)")
	requireSameShape(t, rOff.Frames, rOn.Frames)
	requireSameValues(t, url, expressions(rOff.Frames), expressions(rOn.Frames), rOn.Frames)
	return executed(rOn.Frames)
}

// requireSameValues evaluates each rules-backed expression over the
// frames' steps and its raw twin at the rules' evaluation times: a rule
// group evaluates at a phase of its own inside its interval (Prometheus
// derives it from the group's name and file; promtool's backfill keeps
// it; vmalert aligns to the interval), so the rules' value at a step is
// the raw answer at the latest evaluation at or before it. With steps a
// multiple of the interval the lag is the same at every step.
func requireSameValues(t *testing.T, url string, raw, rules []string, fs data.Frames) {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	require.Equal(t, len(raw), len(rules))
	times := fs[0].Fields[0]
	start, end := times.At(0).(time.Time), times.At(times.Len()-1).(time.Time)
	step := times.At(1).(time.Time).Sub(start)
	ctx := context.Background()
	compared := 0
	for i := range rules {
		if rules[i] == raw[i] {
			continue // a signal no rule records (queue's waiting_by_reason)
		}
		if strings.HasPrefix(rules[i], "topk(") {
			// topK's ranking: its subquery steps on multiples of the step
			// whatever the evaluation time, so it cannot be shifted by the
			// lag; k covers every group, so it picks the same ones.
			continue
		}
		rawParts, ruleParts := taggedParts(t, raw[i]), taggedParts(t, rules[i])
		for tag, rule := range ruleParts {
			if rule == rawParts[tag] {
				continue // a part no rule records (waitTime's live wait)
			}
			lag := ruleLag(t, c, rule, start)
			got, _, err := c.QueryRange(ctx, rule, v1.Range{Start: start, End: end, Step: step})
			require.NoError(t, err)
			want, _, err := c.QueryRange(ctx, rawParts[tag], v1.Range{Start: start.Add(-lag), End: end.Add(-lag), Step: step})
			require.NoError(t, err)
			compared += requireSameMatrix(t, want, got, lag)
		}
	}
	require.Positive(t, compared, "some values compared")
}

// taggedParts splits an expression joined by or into its parts by the
// signal each tags (waitTime's p50, …, mean), each rendered by
// Prometheus' parser; an expression of one part is that part (tag ""). A
// part may read another rule group than its neighbours (the recorded
// quantiles, the bucket rates' mean), which evaluates at a phase of its
// own, so each part is compared at its own group's evaluation times.
func taggedParts(t *testing.T, expr string) map[string]string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	require.NoError(t, err, expr)
	out := map[string]string{}
	var walk func(parser.Expr)
	walk = func(n parser.Expr) {
		if b, ok := n.(*parser.BinaryExpr); ok && b.Op == parser.LOR {
			walk(b.LHS)
			walk(b.RHS)
			return
		}
		tag := ""
		if c, ok := n.(*parser.Call); ok && c.Func.Name == "label_replace" && len(c.Args) == 5 {
			if s, ok := c.Args[2].(*parser.StringLiteral); ok {
				tag = s.Val
			}
		}
		out[tag] = n.String()
	}
	walk(e)
	if len(out) == 1 {
		return map[string]string{"": expr}
	}
	return out
}

var ruleNameRE = regexp.MustCompile(`engine:[a-z0-9_]+:[a-z0-9_]+`)

// ruleLag is how long before at the rules read by expr were last evaluated.
func ruleLag(t *testing.T, c *prom.Client, expr string, at time.Time) time.Duration {
	t.Helper()
	name := ruleNameRE.FindString(expr)
	v, _, err := c.Query(context.Background(), "max(timestamp("+name+"))", at)
	require.NoError(t, err)
	require.NotEmpty(t, v, name)
	lag := at.Sub(time.UnixMilli(int64(float64(v[0].Value)*1000 + 0.5)))
	require.True(t, lag >= 0 && lag < ruleTestEvery, "lag %s", lag)
	return lag
}

// requireSameMatrix: the same series, each with the same number of points
// and values within a relative 1e-9 (sums in another order).
func requireSameMatrix(t *testing.T, want, got prom.Matrix, lag time.Duration) int {
	t.Helper()
	w, g := bySeries(want), bySeries(got)
	require.Equal(t, sortedKeys(w), sortedKeys(g), "same series")
	n := 0
	for k, ws := range w {
		gs := g[k]
		require.Equal(t, len(ws.Values), len(gs.Values), "%s: same steps", k)
		for j, wv := range ws.Values {
			require.Equal(t, ws.Times[j].Add(lag), gs.Times[j])
			require.InDelta(t, wv, gs.Values[j], 1e-9*math.Max(1, math.Abs(wv)), "%s at %v (raw at %v)", k, gs.Times[j], ws.Times[j])
			n++
		}
	}
	return n
}

func bySeries(m prom.Matrix) map[string]*prom.Series {
	out := map[string]*prom.Series{}
	for _, s := range m {
		out[model.LabelSet(toLabelSet(s.Labels)).String()] = s
	}
	return out
}

func toLabelSet(ls map[string]string) model.LabelSet {
	out := model.LabelSet{}
	for k, v := range ls {
		out[model.LabelName(k)] = model.LabelValue(v)
	}
	return out
}

// expressions are the expressions the frames' executed query holds, one
// per line between "Expr: " and "Step:".
func expressions(fs data.Frames) []string {
	s := fs[0].Meta.ExecutedQueryString
	s = strings.TrimPrefix(s, "Expr: ")
	s = s[:strings.Index(s, "\nStep:")]
	return strings.Split(s, "\n")
}

func executed(fs data.Frames) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Meta != nil {
			b.WriteString(f.Meta.ExecutedQueryString + "\n")
		}
	}
	return b.String()
}

// requireSameShape: the same series (name and labels) at the same steps.
func requireSameShape(t *testing.T, want, got data.Frames) {
	t.Helper()
	w, g := frameIndex(want), frameIndex(got)
	require.Equal(t, sortedKeys(w), sortedKeys(g), "same series")
	for k, wf := range w {
		gf := g[k]
		require.Equal(t, wf.Rows(), gf.Rows(), "%s: same steps", k)
		for i := range wf.Rows() {
			require.Equal(t, wf.Fields[0].At(i), gf.Fields[0].At(i), "%s: step %d", k, i)
		}
	}
}

func frameIndex(fs data.Frames) map[string]*data.Frame {
	out := map[string]*data.Frame{}
	for _, f := range fs {
		if len(f.Fields) < 2 {
			continue
		}
		out[f.Name+" "+f.Fields[1].Labels.String()] = f
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
