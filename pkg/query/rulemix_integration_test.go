//go:build !mutation

package query_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// mixCase is one range query asked over a range whose first half the
// rules did not record; probe is a recorded name it reads, whose series
// show where the rules begin.
type mixCase struct {
	name, query, probe string
}

var mixCases = []mixCase{
	{"ttft quantiles by model", `{"queryType":"waitTime","family":"ttft","quantiles":[0.5,0.99],"grouping":"model"}`,
		"engine:vllm_time_to_first_token_seconds_count:rate1m"},
	{"e2e fleet-wide", `{"queryType":"waitTime","family":"e2e","quantiles":[0.9],"grouping":"none"}`,
		"engine:vllm_e2e_request_latency_seconds_count:rate1m"},
	{"queue by model", `{"queryType":"queue","grouping":"model"}`, "engine:vllm_num_requests_running:sum"},
}

// TestRuleMixExactness checks issue 22's "mixing is allowed where a range
// starts before the rules did" on Prometheus 2 and 3 and VictoriaMetrics:
// the rule file is evaluated after the fact over the second half of the
// scraped range only (as if the rules were installed then), and the whole
// range asked with rules on and off. With rules on the answer has the raw
// answer's series and steps; before the rules' first evaluation (the first
// step where their series show, found here by a plain range query) its
// values are the raw answer's, from then on the all-rules answer's over
// that part (asked on its own, by a fresh executor); the executed query
// shows both expressions and the notice says from when.
func TestRuleMixExactness(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.HotFleet(23))
	servers := map[promtest.Kind]*promtest.Server{}
	for _, k := range promtest.Kinds() {
		o := promtest.Options{Targets: env.Targets(), Backend: k}
		if k != promtest.VictoriaMetrics {
			o.Args = []string{"--web.enable-admin-api"} // for BackfillRules' snapshot
		}
		servers[k] = promtest.Start(t, o)
	}
	ruleFile := promtest.RuleFileEvery(t, ruleTestEvery)
	time.Sleep(time.Until(env.Started.Add(150 * time.Second)))
	from := env.Started.Add(25 * time.Second)
	bfEnd := time.Now().Add(-5 * time.Second).Truncate(ruleTestEvery)
	mid := from.Add(bfEnd.Sub(from) / 2).Truncate(ruleTestEvery)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			srv := servers[k]
			if k == promtest.VictoriaMetrics {
				srv.ReplayRules(t, ruleFile, mid, bfEnd)
			} else {
				srv.BackfillRules(t, ruleFile, mid, bfEnd)
			}
			for _, c := range mixCases {
				t.Run(c.name, func(t *testing.T) {
					checkRuleMix(t, srv.URL, c, from, bfEnd.Add(-ruleTestEvery), mixTolerance[k])
				})
			}
			for _, c := range topkMixCases {
				t.Run(c.name, func(t *testing.T) {
					checkTopKMix(t, srv.URL, c, from, bfEnd.Add(-ruleTestEvery), mixTolerance[k])
				})
			}
			t.Run("fleet table", func(t *testing.T) {
				checkFleetMix(t, srv.URL, from, mid, bfEnd.Add(-ruleTestEvery), mixTolerance[k])
			})
		})
	}
}

// mixTolerance is how far, relatively, the mixed answer may be from the
// raw one and the all-rules one at the same step: nothing on Prometheus,
// whose evaluation is deterministic; on VictoriaMetrics the last bit
// (sums over series in an order that changes between queries: a first run
// saw 35.31400966183478 against 35.31400966183479).
var mixTolerance = map[promtest.Kind]float64{promtest.VictoriaMetrics: 1e-12}

// checkRuleMix asks c over [from, to] with rules on and off, and the
// all-rules plan over the part from the rules' first step, and compares
// within the relative tolerance tol (0: exactly).
func checkRuleMix(t *testing.T, url string, c mixCase, from, to time.Time, tol float64) {
	q := dq("A", c.query, from, to)
	// Grafana's interval 15s: the step, three evaluations; $__rate_interval
	// is then max(15s + 15s, 4 × 15s) = 1m, the recorded window.
	q.Interval = 15 * time.Second
	rOn := run(t, settingsExecutor(t, url, `{"scrapeInterval":"15s"}`), q).Responses["A"]
	rOff := run(t, settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false}`), q).Responses["A"]
	require.NoError(t, rOn.Error)
	require.NoError(t, rOff.Error)
	require.NotEmpty(t, rOff.Frames)
	requireSameShape(t, rOff.Frames, rOn.Frames)

	times := rOff.Frames[0].Fields[0]
	start, end := times.At(0).(time.Time), times.At(times.Len()-1).(time.Time)
	split := firstShown(t, url, c.probe, start, end)
	require.True(t, split.After(start) && split.Before(end), "the rules begin inside the range: %v in [%v, %v]", split, start, end)

	raw, mixed := expressions(rOff.Frames), expressions(rOn.Frames)
	require.Subset(t, mixed, raw, "the raw expressions, for the steps before the rules")
	require.Contains(t, executed(rOn.Frames), "engine:vllm_", "and the rules' expressions")
	require.Contains(t, noticeTexts(rOn.Frames), "Answered from recording rules from "+split.UTC().Format("15:04:05")+
		" UTC on (engine:…, every 5s): each step shows the rules' latest evaluation at or before it; raw series before, when the rules had not run yet.")

	qAll := dq("A", c.query, split, to)
	qAll.Interval = q.Interval
	rAll := run(t, settingsExecutor(t, url, `{"scrapeInterval":"15s"}`), qAll).Responses["A"]
	require.NoError(t, rAll.Error)
	require.Contains(t, noticeTexts(rAll.Frames), "Answered from recording rules (engine:…, every 5s)", "the part from the split is all rules")
	before, after := compareMixed(t, rOn.Frames, rOff.Frames, rAll.Frames, split, tol)
	require.Positive(t, before, "values before the rules compared")
	require.Positive(t, after, "values on the rules compared")
	t.Logf("%s: split at %s; %d raw and %d rules values compared", c.name, split.UTC().Format("15:04:05"), before, after)
}

// firstShown is the first step of [start, end] (15s apart) at which the
// recorded series name shows: the first step at or after its first
// evaluation.
func firstShown(t *testing.T, url, name string, start, end time.Time) time.Time {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	m, _, err := c.QueryRange(context.Background(), "count("+name+")", v1.Range{Start: start, End: end, Step: 15 * time.Second})
	require.NoError(t, err)
	require.Len(t, m, 1, name)
	return m[0].Times[0]
}

// compareMixed: at every step of every series, the mixed answer's value
// is the raw answer's before split and the all-rules answer's (at the same
// time) from split on, within the relative tolerance tol (NaN where it is
// NaN); it returns how many values it compared on each side.
func compareMixed(t *testing.T, mixed, raw, all data.Frames, split time.Time, tol float64) (before, after int) {
	t.Helper()
	m, r, a := frameIndex(mixed), frameIndex(raw), frameIndex(all)
	for k, mf := range m {
		allAt := map[time.Time]float64{}
		if af := a[k]; af != nil {
			for i := range af.Rows() {
				v, err := af.Fields[1].FloatAt(i)
				require.NoError(t, err)
				allAt[af.Fields[0].At(i).(time.Time)] = v
			}
		}
		for i := range mf.Rows() {
			at := mf.Fields[0].At(i).(time.Time)
			got, err := mf.Fields[1].FloatAt(i)
			require.NoError(t, err)
			want, err := r[k].Fields[1].FloatAt(i)
			require.NoError(t, err)
			if !at.Before(split) {
				w, ok := allAt[at]
				require.True(t, ok, "%s: the all-rules answer has the step %v", k, at)
				want = w
				after++
			} else {
				before++
			}
			same := want == got || (math.IsNaN(want) && math.IsNaN(got)) || math.Abs(got-want) <= tol*math.Abs(want)
			require.True(t, same, "%s at %v: mixed %v, want %v", k, at, got, want)
		}
	}
	return before, after
}
