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

// truthFamilies are the families whose per-request truth the simulator logs.
var truthFamilies = map[string]func(sim.CompletedRequest) time.Duration{
	"ttft":       func(c sim.CompletedRequest) time.Duration { return c.TTFT },
	"e2e":        func(c sim.CompletedRequest) time.Duration { return c.E2E },
	"queue_time": func(c sim.CompletedRequest) time.Duration { return c.QueueTime },
}

func checkSLOTruth(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	e := executor(t, srv.URL)
	first := fleettest.FirstScrape(t, srv)
	to := time.Now().Truncate(time.Second)
	done := env.Fleet.CompletedRequests()
	for family, latency := range truthFamilies {
		t.Run(family, func(t *testing.T) {
			key := vllm.SLOFamilies[family]
			bound := medianBound(key, done, latency)
			js := fmt.Sprintf(`{"queryType":"slo","family":%q,"threshold":%g,"target":0.9,"window":"1h","grouping":"instance"}`, family, bound)
			r := run(t, e, dq("S", js, to.Add(-20*time.Second), to)).Responses["S"]
			require.NoError(t, r.Error)
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
func medianBound(key vllm.SignalKey, done []sim.CompletedRequest, latency func(sim.CompletedRequest) time.Duration) float64 {
	var v []float64
	for _, c := range done {
		v = append(v, latency(c).Seconds())
	}
	sort.Float64s(v)
	b, _ := vllm.SnapBound(key, v[len(v)/2])
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
