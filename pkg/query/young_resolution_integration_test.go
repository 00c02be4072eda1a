//go:build !mutation

package query_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestYoungRateFiniteOnACoarseResolution: the young-series correction
// (window ÷ the time a series has covered) divides by at least the
// resolution, so an engine born between two of its subquery's steps reads
// a finite rate, never +Inf. The data source says 60s while Prometheus
// holds a sample every 15s (a scrape faster than the setting): at a step
// 30s after the engine's first sample the only subquery step that sees
// it is the step itself, where its oldest timestamp is the step's own
// time. On real Prometheus 2 and 3.
func TestYoungRateFiniteOnACoarseResolution(t *testing.T) {
	t.Parallel()
	at := time.Now().Truncate(time.Minute).Add(-2 * time.Minute) // a multiple of 60s
	start := at.Add(-time.Hour)
	born := at.Add(-30 * time.Second)
	labels := func(inst string) string { return `instance="` + inst + `",engine="0",model_name="m",job="vllm"` }
	families := []omFamily{
		{name: "vllm:num_preemptions", typ: "counter", series: []omSeries{
			{name: "vllm:num_preemptions_total", labels: labels("old:8000"), value: func(ts time.Time) float64 { return 1000 + ts.Sub(start).Seconds() }},
			{name: "vllm:num_preemptions_total", labels: labels("young:8000"), from: born,
				value: func(ts time.Time) float64 { return 1000 + ts.Sub(born).Seconds() }},
		}},
		{name: "vllm:num_requests_running", typ: "gauge", series: []omSeries{
			{name: "vllm:num_requests_running", labels: labels("old:8000"), value: func(time.Time) float64 { return 1 }},
			{name: "vllm:num_requests_running", labels: labels("young:8000"), from: born, value: func(time.Time) float64 { return 1 }},
		}},
	}
	for _, k := range promtest.Kinds()[:2] {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := backfilled(t, k, families, start, at.Add(5*time.Minute), 15*time.Second)
			e := settingsExecutor(t, srv.URL, `{"scrapeInterval":"60s"}`)
			r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`),
				Interval: time.Minute, MaxDataPoints: 1000, TimeRange: backend.TimeRange{From: at.Add(-10 * time.Minute), To: at}}).Responses["A"]
			require.NoError(t, r.Error)
			frames := byName(r.Frames)
			for _, inst := range []string{"old:8000", "young:8000"} {
				f := frames[inst+" preemption_rate"]
				require.NotNil(t, f, "frames: %v", keys(frames))
				v := valueAt(t, f, at)
				require.False(t, math.IsInf(v, 0) || math.IsNaN(v), "%s: %g", inst, v)
				require.Greater(t, v, 0.0, inst)
				require.LessOrEqual(t, v, 1.0+1e-9, "%s: at most its true 1 preemption/s", inst)
			}
		})
	}
}
