//go:build !mutation

package query_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestIncrementalKeepsEachStepApart: the incremental store keeps one
// answer per expression and step. A 60s-step range of an expression
// right after a 30s-step range of the same expression and the same time
// range (all of it final) is answered on its own 60s grid, equal to a
// fresh fetch with incremental querying off, not from the 30s answer's
// points.
func TestIncrementalKeepsEachStepApart(t *testing.T) {
	t.Parallel()
	now := time.Now().Truncate(time.Minute)
	waiting := omFamily{name: "vllm:num_requests_waiting", typ: "gauge", series: []omSeries{{
		name: "vllm:num_requests_waiting", labels: `instance="a:8000",engine="0",model_name="m",job="vllm"`,
		// A different value at every 15s sample, so points of one grid are
		// not those of another.
		value: func(ts time.Time) float64 { return float64(ts.Unix()/15%97) + 0.5 },
	}}}
	srv := backfilled(t, promtest.Prometheus2, []omFamily{waiting}, now.Add(-2*time.Hour), now.Add(5*time.Minute), 15*time.Second)

	incr := settingsExecutor(t, srv.URL, `{"scrapeInterval":"15s"}`)
	full := settingsExecutor(t, srv.URL, `{"scrapeInterval":"15s","incrementalQuerying":false}`)
	// Older than the overlap (10 minutes) when fetched: every step is final.
	tr := backend.TimeRange{From: now.Add(-60 * time.Minute), To: now.Add(-30 * time.Minute)}
	js := `{"queryType":"promql","expr":"vllm:num_requests_waiting"}`
	at := func(step time.Duration) backend.DataQuery {
		return backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), Interval: step, MaxDataPoints: 10_000, TimeRange: tr}
	}
	first := run(t, incr, at(30*time.Second)).Responses["A"]
	require.NoError(t, first.Error)
	requireSpacing(t, first.Frames, 30*time.Second, 61)

	for _, step := range []time.Duration{60 * time.Second, 30 * time.Second} {
		got := run(t, incr, at(step)).Responses["A"]
		want := run(t, full, at(step)).Responses["A"]
		require.NoError(t, got.Error)
		require.NoError(t, want.Error)
		requireSpacing(t, want.Frames, step, int(30*time.Minute/step)+1)
		requireSpacing(t, got.Frames, step, int(30*time.Minute/step)+1)
		require.Equal(t, framesJSON(t, want), framesJSON(t, got), "step %s", step)
	}
	s := incr.Increments.Stats()
	require.Equal(t, int64(2), s.Full, "the 30s and 60s ranges are fetched whole once each: %+v", s)
	require.Equal(t, 2, s.Bases, "one answer kept per step: %+v", s)
}

// requireSpacing checks that frames hold one series whose points are n,
// step apart.
func requireSpacing(t *testing.T, frames data.Frames, step time.Duration, n int) {
	t.Helper()
	require.Len(t, frames, 1)
	f := frames[0]
	require.Equal(t, n, f.Rows(), "points of a %s grid", step)
	for i := 1; i < f.Rows(); i++ {
		gap := f.Fields[0].At(i).(time.Time).Sub(f.Fields[0].At(i - 1).(time.Time))
		require.Equal(t, step, gap, "point %d", i)
	}
}
