//go:build !mutation

package query_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestIncrementalAnswersEqualFullFetches: on real Prometheus 2 and 3 and
// VictoriaMetrics scraping the simulator, a refreshed range answered from
// the final part of the earlier answer plus a fetch of the new steps gives
// exactly the frames one fetch of the whole range gives, for every query
// type that reads ranges.
func TestIncrementalAnswersEqualFullFetches(t *testing.T) {
	t.Parallel()
	_, servers := onEveryBackend(t, fleettest.HotFleet(11), `count_over_time(vllm:num_requests_waiting[1m]) >= 30`)
	queries := map[string]string{
		"promql":      `{"queryType":"promql","expr":"vllm:num_requests_waiting"}`,
		"queue":       `{"queryType":"queue","grouping":"instance_engine"}`,
		"waitTime":    `{"queryType":"waitTime","grouping":"instance"}`,
		"preemptions": `{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`,
	}
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			url := servers[k].URL
			// An overlap of three scrapes: steps more than 3s before a fetch are final.
			incr := settingsExecutor(t, url, `{"scrapeInterval":"1s","incrementalQueryOverlapWindow":"3s"}`)
			full := settingsExecutor(t, url, `{"scrapeInterval":"1s","incrementalQuerying":false}`)
			now := time.Now().Truncate(time.Second)
			first := backend.TimeRange{From: now.Add(-30 * time.Second), To: now.Add(-12 * time.Second)}
			for _, js := range queries {
				requireAnswers(t, run(t, incr, dqRange("A", js, first)))
			}
			time.Sleep(2 * time.Second)
			// Later, shorter at the start and longer at the end; every step
			// of it is older than a scrape when the full fetch runs.
			later := backend.TimeRange{From: first.From.Add(5 * time.Second), To: now.Add(-7 * time.Second)}
			for name, js := range queries {
				t.Run(name, func(t *testing.T) {
					got := run(t, incr, dqRange("A", js, later)).Responses["A"]
					want := run(t, full, dqRange("A", js, later)).Responses["A"]
					require.NoError(t, got.Error)
					require.NoError(t, want.Error)
					require.Equal(t, framesJSON(t, want), framesJSON(t, got))
				})
			}
			s := incr.Increments.Stats()
			require.GreaterOrEqual(t, s.Tails, int64(len(queries)), "the later ranges were answered piecewise: %+v", s)
			require.Zero(t, full.Increments, "incrementalQuerying false keeps no answers")
		})
	}
}

func dqRange(ref, js string, tr backend.TimeRange) backend.DataQuery {
	return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 1000, TimeRange: tr}
}

// framesJSON is the response's frames as Grafana receives them.
func framesJSON(t *testing.T, r backend.DataResponse) string {
	t.Helper()
	b, err := json.Marshal(r.Frames)
	require.NoError(t, err)
	return string(b)
}
