package plugin_test

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
)

// TestHostWorkload runs the workload query's prompt view and an
// availability objective through the built plugin binary over gRPC: the
// heatmap arrives as one heatmap-rows frame per model whose fields are
// the buckets in ascending order, each holding counts, with a warning
// when the engines' bucket lists differ (max_model_len); the objective's
// frames are alertable, and the instance that fails requests burns its
// budget while the others do not.
func TestHostWorkload(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	cfg := fleettest.HotFleet(29)
	failing := cfg.Engine
	failing.ErrorRate = 0.2
	cfg.Instances[1].Engine = &failing
	long := cfg.Engine
	long.MaxModelLen = 32768 // length buckets up to 20000 where the others stop at 5000
	cfg.Instances[3].Engine = &long
	env := fleettest.Start(t, cfg)
	env.Prom.WaitForSeries(t, `count_over_time(vllm:request_prompt_tokens_count[1m]) >= 30`, 8, 90*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "workload", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	now := time.Now()
	query := func(js string) backend.DataResponse {
		q := backend.DataQuery{RefID: "W", JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
		r := host.QueryData(t, ds, nil, q).Responses["W"]
		require.NoError(t, r.Error)
		return r
	}
	t.Run("prompt heatmap", func(t *testing.T) {
		r := query(`{"queryType":"workload","view":"prompt","grouping":"model","interval":"10s"}`)
		require.Len(t, r.Frames, 2, "one heatmap per model")
		for _, f := range r.Frames {
			checkHeatmapFrame(t, f)
		}
	})
	t.Run("engines with other length buckets are named", func(t *testing.T) {
		r := query(`{"queryType":"workload","view":"prompt","grouping":"none","interval":"10s"}`)
		require.Len(t, r.Frames, 1)
		checkHeatmapFrame(t, r.Frames[0])
		var text string
		for _, n := range r.Frames[0].Meta.Notices {
			text += n.Text + "\n"
		}
		require.Contains(t, text, "Some of the 8 selected engines lack the prompt length bounds 10000, 20000")
		r = query(`{"queryType":"workload","view":"prompt","grouping":"none","interval":"10s","instances":["` + env.Endpoints[0].Addr + `"]}`)
		for _, n := range r.Frames[0].Meta.Notices {
			require.NotContains(t, n.Text, "lack the prompt length bounds", "one bucket list")
		}
	})
	t.Run("availability objective", func(t *testing.T) {
		r := query(`{"queryType":"slo","objective":"availability","target":0.99,"window":"1h","grouping":"instance"}`)
		require.Len(t, r.Frames, len(env.Endpoints)*6, "attainment, budget and four burn pairs per instance")
		last := map[string]float64{}
		seen := map[string]bool{}
		for _, f := range r.Frames {
			require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
			key := f.Fields[1].Labels.String()
			require.False(t, seen[key], "alerting needs unique label sets: %s", key)
			seen[key] = true
			for i := f.Rows() - 1; i >= 0; i-- {
				if v := f.Fields[1].At(i).(float64); !math.IsNaN(v) {
					last[f.Name] = v
					break
				}
			}
		}
		bad, good := env.Endpoints[1].Addr, env.Endpoints[2].Addr
		require.InDelta(t, 0.8, last[bad+" attainment"], 0.06, "a fifth of its requests fail: %v", last)
		require.Equal(t, 1.0, last[good+" attainment"])
		require.Greater(t, last[bad+" burn_1h_5m"], 14.4, "pages")
		require.Zero(t, last[good+" burn_1h_5m"])
	})
}

// checkHeatmapFrame: time, then buckets in ascending numeric order, +Inf
// last, named by le and labelled with it, counts never negative and some.
func checkHeatmapFrame(t *testing.T, f *data.Frame) {
	t.Helper()
	require.Equal(t, data.FrameType("heatmap-rows"), f.Meta.Type)
	require.Equal(t, data.FieldTypeTime, f.Fields[0].Type())
	require.Greater(t, len(f.Fields), 3)
	prev, total := math.Inf(-1), 0.0
	for _, fd := range f.Fields[1:] {
		require.Equal(t, data.FieldTypeFloat64, fd.Type())
		le, err := strconv.ParseFloat(fd.Name, 64)
		require.NoError(t, err, fd.Name)
		require.Greater(t, le, prev, "buckets ascend")
		prev = le
		require.Equal(t, fd.Name, fd.Labels["le"])
		for i := 0; i < fd.Len(); i++ {
			v := fd.At(i).(float64)
			require.GreaterOrEqual(t, v, 0.0)
			total += v
		}
	}
	require.True(t, math.IsInf(prev, 1), "+Inf is the last bucket")
	require.Greater(t, total, 10.0, "requests counted")
}
