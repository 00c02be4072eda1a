//go:build !mutation

package query_test

import (
	"sort"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
)

// lastValue returns the last point of a series frame.
func lastValue(t *testing.T, f *data.Frame) (time.Time, float64) {
	t.Helper()
	require.NotNil(t, f)
	n := f.Rows()
	require.Positive(t, n)
	v, ok := f.Fields[1].ConcreteAt(n - 1)
	require.True(t, ok, "last point is null")
	return f.Fields[0].At(n - 1).(time.Time), v.(float64)
}

// TestYoungSeries: a fleet that starts inside the query range (its series
// younger than the rate window) gets a live wait and a preemption rate
// that match the simulator, not ones inflated or deflated by Prometheus'
// rate() dividing a few seconds' increase by the whole window.
func TestYoungSeries(t *testing.T) {
	t.Parallel()
	const step = 30 * time.Second
	// Start just after a step boundary, so the query's last point (on the
	// next boundary) sees the fleet about 15s old against a 120s window.
	if wait := (10*time.Second - time.Duration(time.Now().UnixNano())%step + step) % step; wait > 0 {
		time.Sleep(wait)
	}
	env := fleettest.Start(t, fleettest.HotFleet(13))
	hot := env.Endpoints[0].Addr
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 2`, 8, 30*time.Second)
	first := env.FirstScrape(t)
	// The last point: the first step boundary at least 6s after the first scrape.
	edge := first.Add(6*time.Second - time.Nanosecond).Truncate(step).Add(step)
	window := 4 * step // $__rate_interval with a 30s min interval
	require.LessOrEqual(t, edge.Sub(first), window/3, "the fleet must be young at the last point")
	time.Sleep(time.Until(edge.Add(2 * time.Second)))
	to := time.Now()
	e := executor(t, env.Prom.URL)
	js := `{"queryType":"waitTime","live":true,"grouping":"instance","interval":"30s","instances":["` + hot + `"]}`
	pjs := `{"queryType":"preemptions","asSeries":true,"grouping":"instance","interval":"30s","instances":["` + hot + `"]}`
	resp := run(t, e, dq("W", js, first.Add(-5*time.Minute), to), dq("P", pjs, first.Add(-5*time.Minute), to))
	require.NoError(t, resp.Responses["W"].Error)
	require.NoError(t, resp.Responses["P"].Error)
	age := edge.Sub(first).Seconds()

	t.Run("live wait", func(t *testing.T) {
		ts, got := lastValue(t, byName(resp.Responses["W"].Frames)[hot+" live"])
		require.True(t, edge.Equal(ts), "last point %s, want %s", ts, edge)
		completed := 0
		var waits []float64
		for _, c := range env.Fleet.CompletedRequests() {
			fin := env.Fleet.WallTime(c.Finished)
			if c.Instance == 0 && fin.After(first) && !fin.After(edge) {
				completed++
				waits = append(waits, c.QueueTime.Seconds())
			}
		}
		require.Greater(t, completed, 20)
		lambda := float64(completed) / age
		lo, hi, ok := env.WaitingRange(0, edge.Add(-time.Second), edge)
		require.True(t, ok)
		sort.Float64s(waits)
		t.Logf("age %.0fs, window %s: live %.2fs; simulator: %d..%d waiting, %.2f req/s leave the queue (Little's law %.2f..%.2fs); recorded queue time p50 %.2fs p99 %.2fs",
			age, window, got, lo, hi, lambda, float64(lo)/lambda, float64(hi)/lambda, waits[len(waits)/2], waits[len(waits)*99/100])
		require.GreaterOrEqual(t, got, 0.7*float64(lo)/lambda)
		require.LessOrEqual(t, got, 1.3*float64(hi)/lambda)
	})

	t.Run("preemption rate", func(t *testing.T) {
		ts, got := lastValue(t, byName(resp.Responses["P"].Frames)[hot+" preemption_rate"])
		require.True(t, edge.Equal(ts), "last point %s, want %s", ts, edge)
		n := 0
		for _, ev := range env.Fleet.PreemptionEvents() {
			if ev.Instance == 0 && ev.Time.After(first) && !ev.Time.After(edge) {
				n++
			}
		}
		require.Greater(t, n, 10)
		want := float64(n) / age
		t.Logf("age %.0fs, window %s: preemption rate %.2f/s; simulator %.2f/s", age, window, got, want)
		require.InDelta(t, want, got, 0.3*want)
	})
}
