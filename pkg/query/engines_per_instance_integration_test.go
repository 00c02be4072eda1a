//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// twoEngineFamilies is a backfilled history, sampled every 15s, of an
// instance "pair" running two data-parallel engines of model m and an
// instance "solo" running one. Pair's engine 0 has its KV cache 60% full
// and preempts 1 request/s; its engine 1 is 50% full. Solo's is 58% full.
// Each of pair's engines runs a burst every fourth sample (8 and 4
// requests, 2 and 1 between); solo runs 3. Every engine finishes 2
// requests/s and nothing waits.
func twoEngineFamilies(start time.Time, step time.Duration) []omFamily {
	type engine struct {
		instance, engine string
		kv, preempt      float64
		burst, between   float64
	}
	engines := []engine{
		{"pair:8000", "0", 0.6, 1, 8, 2},
		{"pair:8000", "1", 0.5, 0, 4, 1},
		{"solo:8000", "0", 0.58, 0, 3, 3},
	}
	sample := func(ts time.Time) int64 { return int64(ts.Sub(start) / step) }
	var kv, running, waiting, preempt, done []omSeries
	for _, e := range engines {
		lbl := fmt.Sprintf(`instance="%s",engine="%s",model_name="m",job="vllm"`, e.instance, e.engine)
		kv = append(kv, omSeries{name: "vllm:kv_cache_usage_perc", labels: lbl, value: func(time.Time) float64 { return e.kv }})
		running = append(running, omSeries{name: "vllm:num_requests_running", labels: lbl, value: func(ts time.Time) float64 {
			if sample(ts)%4 == 0 {
				return e.burst
			}
			return e.between
		}})
		waiting = append(waiting, omSeries{name: "vllm:num_requests_waiting", labels: lbl, value: func(time.Time) float64 { return 0 }})
		preempt = append(preempt, omSeries{name: "vllm:num_preemptions_total", labels: lbl, value: func(ts time.Time) float64 {
			return 1000 + e.preempt*ts.Sub(start).Seconds()
		}})
		done = append(done, omSeries{name: "vllm:request_success_total", labels: lbl + `,finished_reason="stop"`, value: func(ts time.Time) float64 {
			return 1000 + 2*ts.Sub(start).Seconds()
		}})
	}
	return []omFamily{
		{name: "vllm:kv_cache_usage_perc", typ: "gauge", series: kv},
		{name: "vllm:num_requests_running", typ: "gauge", series: running},
		{name: "vllm:num_requests_waiting", typ: "gauge", series: waiting},
		{name: "vllm:num_preemptions", typ: "counter", series: preempt},
		{name: "vllm:request_success", typ: "counter", series: done},
	}
}

// TestInstanceOfTwoEngines: how the queries fold an instance's engines,
// on real Prometheus 2 and 3. Each engine has a KV cache of its own, so
// the saturation verdict's KV peak is the fuller engine's (60%, not the
// sum 110%, which with pair's preemptions would read KV-bound); its batch
// ceiling is the engines' peaks added up (8 + 4), not their means; top-k
// by KV usage ranks an instance by its engines' average (pair 55% under
// solo 58%) and names each ranked instance's model and engine count.
func TestInstanceOfTwoEngines(t *testing.T) {
	t.Parallel()
	step := 15 * time.Second
	// at, the range's end, is on the sample grid and before now.
	at := time.Now().Truncate(time.Minute).Add(-time.Minute)
	start := at.Add(-time.Hour)
	for _, k := range promtest.Kinds()[:2] {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := backfilled(t, k, twoEngineFamilies(start, step), start, at.Add(5*time.Minute), step)
			e := settingsExecutor(t, srv.URL, `{"scrapeInterval":"15s"}`)
			q := func(js string) backend.DataResponse {
				r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), Interval: step, MaxDataPoints: 1000,
					TimeRange: backend.TimeRange{From: at.Add(-10 * time.Minute), To: at}}).Responses["A"]
				require.NoError(t, r.Error)
				require.Len(t, r.Frames, 1)
				return r
			}

			t.Run("saturation", func(t *testing.T) {
				rows := tableRows(t, q(`{"queryType":"saturation","grouping":"instance","format":"table"}`).Frames[0])
				pair, solo := rows["pair:8000"], rows["solo:8000"]
				require.NotNil(t, pair, "rows: %v", rows)
				require.NotNil(t, solo, "rows: %v", rows)
				require.InDelta(t, 0.6, pair["kv cache peak"], 1e-9, "the fuller engine's KV cache")
				require.InDelta(t, 0.58, solo["kv cache peak"], 1e-9)
				require.Equal(t, 12.0, pair["batch ceiling"], "engine 0's peak of 8 plus engine 1's of 4")
				require.Equal(t, 3.0, solo["batch ceiling"])
				require.InDelta(t, 1, pair["preemptions/s"], 1e-6)
				require.Equal(t, vllm.VerdictOK, pair["verdict"], "%s", pair["reason"])
				require.Equal(t, vllm.VerdictOK, solo["verdict"], "%s", solo["reason"])
			})

			t.Run("topk by KV usage", func(t *testing.T) {
				f := q(`{"queryType":"topk","rankBy":"kv_usage","k":2,"grouping":"instance","format":"table"}`).Frames[0]
				require.Equal(t, 2, f.Rows())
				col := func(name string) *data.Field {
					fi, i := f.FieldByName(name)
					require.GreaterOrEqual(t, i, 0, "field %s", name)
					return fi
				}
				for i, want := range []struct {
					instance string
					kv       float64
					engines  int64
				}{{"solo:8000", 0.58, 1}, {"pair:8000", 0.55, 2}} {
					require.Equal(t, want.instance, col("instance").At(i), "rank %d", i+1)
					require.InDelta(t, want.kv, col("kv_usage").At(i).(float64), 1e-9, "%s: the average over its engines", want.instance)
					require.Equal(t, "m", col("model").At(i), want.instance)
					require.Equal(t, want.engines, col("engines").At(i), want.instance)
				}
			})
		})
	}
}

// tableRows reads a table frame keyed by its instance column: each row's
// fields by name (strings as strings, numbers as float64).
func tableRows(t *testing.T, f *data.Frame) map[string]map[string]any {
	t.Helper()
	inst, i := f.FieldByName("instance")
	require.GreaterOrEqual(t, i, 0)
	out := map[string]map[string]any{}
	for r := 0; r < f.Rows(); r++ {
		row := map[string]any{}
		for _, fi := range f.Fields {
			row[fi.Name] = fi.At(r)
		}
		out[inst.At(r).(string)] = row
	}
	return out
}
