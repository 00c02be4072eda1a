//go:build !mutation

package query_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestSLOAgainstTruth runs the slo query against Prometheus 2 and 3 (which
// spell le differently) scraping the hot fleet, and checks each
// instance's attainment against the share of the simulator's own finished
// requests under the bound, its budget and burn rates against the
// attainment, and the snap notice.
func TestSLOAgainstTruth(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, fleettest.HotFleet(13))
	servers := map[promtest.Kind]*promtest.Server{promtest.Prometheus2: env.Prom, promtest.Prometheus3: env.Also(t, promtest.Prometheus3)}
	for _, srv := range servers {
		srv.WaitForSeries(t, `count_over_time(vllm:time_to_first_token_seconds_count[2m]) >= 45`, 8, 120*time.Second)
	}
	for _, k := range promtest.Kinds()[:2] {
		t.Run(k.Name(), func(t *testing.T) { checkSLOTruth(t, env, servers[k]) })
	}
}

// replacedBuckets are bucket lists an operator might configure instead of
// vLLM's: none of their bounds is a default one, and some are integers,
// which Prometheus 2 stores as le="3" when scraped so and Prometheus 3 as
// le="3.0".
var replacedBuckets = map[string][]float64{
	"time_to_first_token_seconds": {0.03, 0.07, 0.15, 0.3, 0.7, 1.2, 3, 7, 12, 30, 70},
	"e2e_request_latency_seconds": {0.07, 0.2, 0.4, 0.7, 1.2, 3, 7, 12, 25, 70},
	"request_queue_time_seconds":  {0.07, 0.2, 0.4, 0.7, 1.2, 3, 7, 12, 25, 70},
}

// TestSLOReplacedBuckets: a fleet whose latency histograms have replaced
// bucket bounds gets, on Prometheus 2 and 3 and VictoriaMetrics, attainment
// that matches the simulator's own requests on those bounds, no claim that
// the engines export no histogram, and a snap notice naming the real bounds.
func TestSLOReplacedBuckets(t *testing.T) {
	t.Parallel()
	cfg := fleettest.HotFleet(13)
	cfg.HistogramBuckets = replacedBuckets
	env := fleettest.Start(t, cfg)
	servers := map[promtest.Kind]*promtest.Server{promtest.Prometheus2: env.Prom}
	for _, k := range promtest.Kinds()[1:] {
		servers[k] = env.Also(t, k)
	}
	for _, srv := range servers {
		srv.WaitForSeries(t, `count_over_time(vllm:time_to_first_token_seconds_count[2m]) >= 45`, 8, 150*time.Second)
	}
	replaced := func(key vllm.SignalKey) vllm.Bounds {
		s, _ := vllm.Lookup(key)
		return vllm.Bounds{Values: replacedBuckets[s.V1]}
	}
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			checkAttainment(t, env, servers[k], replaced)
			to := time.Now().Truncate(time.Second)
			r := run(t, executor(t, servers[k].URL), dq("S", `{"queryType":"slo","family":"ttft","threshold":"0.6"}`, to.Add(-10*time.Second), to)).Responses["S"]
			require.NoError(t, r.Error)
			text := noticeTexts(r.Frames)
			require.Contains(t, text, "using 0.7s")
			require.Contains(t, text, "The bounds the selected series carry for ttft: 0.03, 0.07, 0.15, 0.3, 0.7, 1.2, 3, 7, 12, 30, 70.")
			require.NotContains(t, text, "export no")
		})
	}
}

// truthFamilies are the families whose per-request truth the simulator logs.
var truthFamilies = map[string]func(sim.CompletedRequest) time.Duration{
	"ttft":       func(c sim.CompletedRequest) time.Duration { return c.TTFT },
	"e2e":        func(c sim.CompletedRequest) time.Duration { return c.E2E },
	"queue_time": func(c sim.CompletedRequest) time.Duration { return c.QueueTime },
}

func checkSLOTruth(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	checkAttainment(t, env, srv, func(key vllm.SignalKey) vllm.Bounds { return vllm.DefaultBounds(key) })
	checkSLONotices(t, env, srv)
}

// checkAttainment compares each instance's attainment with the simulator's
// truth, on the family bound (of bounds) nearest the median latency.
func checkAttainment(t *testing.T, env *fleettest.Env, srv *promtest.Server, bounds func(vllm.SignalKey) vllm.Bounds) {
	e := executor(t, srv.URL)
	first := fleettest.FirstScrape(t, srv)
	to := time.Now().Truncate(time.Second)
	// Each frame is its own expression, evaluated a moment apart: only once
	// every engine's samples past the range's end are stored do they see
	// the same data (on a loaded machine VictoriaMetrics' last step moved
	// between the attainment and the budget queries).
	srv.WaitForSeries(t, fmt.Sprintf(`min(timestamp(vllm:num_requests_running)) > %d`, to.Unix()+1), 1, 30*time.Second)
	done := env.Fleet.CompletedRequests()
	for family, latency := range truthFamilies {
		t.Run(family, func(t *testing.T) {
			key := vllm.SLOFamilies[family]
			bound := medianBound(bounds(key), done, latency)
			js := fmt.Sprintf(`{"queryType":"slo","family":%q,"threshold":%g,"target":0.9,"window":"1h","grouping":"instance"}`, family, bound)
			r := run(t, e, dq("S", js, to.Add(-20*time.Second), to)).Responses["S"]
			require.NoError(t, r.Error)
			require.NotContains(t, noticeTexts(r.Frames), "export no")
			require.NotContains(t, noticeTexts(r.Frames), "not a bucket bound", "the threshold is one of the series' bounds")
			require.NotContains(t, noticeTexts(r.Frames), "have no bucket bound", "every engine carries the bound")
			frames := byName(r.Frames)
			checked := 0
			for i, ep := range env.Endpoints {
				att := frames[ep.Addr+" attainment"]
				require.NotNil(t, att, "frames: %v", keys(frames))
				ts, got := lastPoint(att)
				want, n := truthShare(env.Fleet, done, i, first, ts, bound, latency)
				if n < 40 {
					continue // too few requests for a share to be compared
				}
				t.Logf("%s instance %d bound %gs: attainment %.3f, simulator %.3f over %d requests", family, i, bound, got, want, n)
				require.InDelta(t, want, got, 0.04, "%s instance %d: Prometheus attainment %.3f, simulator %.3f over %d requests (bound %gs)", family, i, got, want, n)
				_, left := lastPoint(frames[ep.Addr+" error_budget_left"])
				require.InDelta(t, 1-(1-got)/0.1, left, 1e-6, "budget left = 1 - errors/allowed")
				_, burn := lastPoint(frames[ep.Addr+" burn_1h_5m"])
				require.InDelta(t, (1-got)/0.1, burn, 0.35, "all data lies inside both windows, so both burn rates equal the window's")
				checked++
			}
			require.Greater(t, checked, 1, "instances with enough requests")
		})
	}
}

// checkSLONotices checks the snap notice and the signals option on a fleet
// with vLLM's default bounds.
func checkSLONotices(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	e := executor(t, srv.URL)
	to := time.Now().Truncate(time.Second)
	t.Run("a threshold off the bounds snaps and says so", func(t *testing.T) {
		r := run(t, e, dq("S", `{"queryType":"slo","family":"ttft","threshold":"0.7"}`, to.Add(-10*time.Second), to)).Responses["S"]
		require.NoError(t, r.Error)
		text := noticeText(r.Frames[0].Meta.Notices)
		require.Contains(t, text, "threshold 0.7s is not a bucket bound")
		require.Contains(t, text, "using 0.75s")
		require.Contains(t, text, "0.001, 0.005, 0.01")
		require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, `le=~"0\\.75"`)
	})
	t.Run("signals picks one burn pair for an alert rule", func(t *testing.T) {
		r := run(t, e, dq("S", `{"queryType":"slo","grouping":"instance","signals":["burn_1h_5m"]}`, to.Add(-10*time.Second), to)).Responses["S"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, len(env.Endpoints))
		for _, f := range r.Frames {
			require.Equal(t, "burn_1h_5m", f.Fields[1].Labels["signal"])
		}
		require.Equal(t, 1, strings.Count(r.Frames[0].Meta.ExecutedQueryString, "\n"), "one expression, then the step: %s", r.Frames[0].Meta.ExecutedQueryString)
	})
}

// medianBound is the bucket bound nearest the median latency of all logged
// requests, so attainment sits well inside (0, 1) and a wrong bucket shows.
func medianBound(bounds vllm.Bounds, done []sim.CompletedRequest, latency func(sim.CompletedRequest) time.Duration) float64 {
	var v []float64
	for _, c := range done {
		v = append(v, latency(c).Seconds())
	}
	sort.Float64s(v)
	b, _ := bounds.Snap(v[len(v)/2])
	return b
}

// truthShare is the share of instance's requests finished in (from, to]
// whose latency is at most bound, and how many there were.
func truthShare(f *sim.Fleet, done []sim.CompletedRequest, instance int, from, to time.Time, bound float64, latency func(sim.CompletedRequest) time.Duration) (float64, int) {
	good, n := 0, 0
	for _, c := range done {
		fin := f.WallTime(c.Finished)
		if c.Instance != instance || !fin.After(from) || fin.After(to) {
			continue
		}
		n++
		if latency(c).Seconds() <= bound {
			good++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return float64(good) / float64(n), n
}

func lastPoint(f *data.Frame) (time.Time, float64) {
	for i := f.Rows() - 1; i >= 0; i-- {
		if v := f.Fields[1].At(i).(float64); !math.IsNaN(v) {
			return f.Fields[0].At(i).(time.Time), v
		}
	}
	return time.Time{}, math.NaN()
}

func noticeText(ns []data.Notice) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.Text + "\n")
	}
	return b.String()
}
