package plugin_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
)

// TestHostCapacity runs the capacity query through the built plugin
// binary over gRPC against a fleet a real Prometheus scrapes: a row per
// model with today's replicas, the what-if curve from one replica to at
// least four with its fitted twin in the frame's metadata, the demand
// series; and out-of-range options fail their own query while the others
// in the request answer.
func TestHostCapacity(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Start(t, fleettest.HotFleet(41))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:iteration_tokens_total_count[1m]) >= 30`, 8, 90*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "capacity", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	now := time.Now()
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 60,
			TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
	}
	resp := host.QueryData(t, ds, nil,
		q("OK", `{"queryType":"capacity"}`),
		q("T", `{"queryType":"capacity","threshold":0}`),
		q("H", `{"queryType":"capacity","headroom":6}`),
		q("D", `{"queryType":"capacity","drain":"soon"}`),
		q("S", `{"queryType":"capacity","format":"series"}`))
	ok := resp.Responses["OK"]
	require.NoError(t, ok.Error)
	require.Len(t, ok.Frames, 4, "the table, the what-if and a demand series per model")
	table, whatIf := ok.Frames[0], ok.Frames[1]
	require.Equal(t, "capacity", table.Name)
	require.Equal(t, 2, table.Rows(), "two models")
	for i := 0; i < table.Rows(); i++ {
		v, _ := table.Fields[1].ConcreteAt(i)
		require.EqualValues(t, 2, v, "two servers per model: %s", table.Fields[1].Name)
	}
	require.Equal(t, "what-if", whatIf.Name)
	require.Equal(t, 8, whatIf.Rows(), "1 to 4 replicas for each model")
	twin := whatIf.Meta.Custom.(map[string]any)["twin"].([]any)
	require.Len(t, twin, 2)
	for _, f := range twin {
		fit := f.(map[string]any)
		require.Greater(t, fit["stepBaseMs"], 0.0)
		blocks := 8192.0
		if fit["group"].([]any)[0] == "meta-llama/Llama-3.1-8B-Instruct" {
			blocks = 96 // the hot server's: the smallest cache of the model's servers
		}
		require.EqualValues(t, blocks, fit["kvBlocks"])
	}
	// format series is alertable: time series only, the demand and each
	// model's replicas now (and needed, desired) to compare in a rule.
	signals := map[string]int{}
	for _, f := range resp.Responses["S"].Frames {
		require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type, f.Name)
		signals[f.Fields[1].Labels["signal"]]++
	}
	require.Equal(t, 2, signals["arrivals"], "%v", signals)
	require.Equal(t, 2, signals["replicas_now"], "%v", signals)
	require.Equal(t, 2, signals["desired_replicas"], "%v", signals)
	for _, ref := range []string{"T", "H", "D"} {
		r := resp.Responses[ref]
		require.Error(t, r.Error, ref)
		require.Equal(t, backend.ErrorSourceDownstream, r.ErrorSource, ref)
	}
	require.Contains(t, resp.Responses["T"].Error.Error(), "threshold")
	require.Contains(t, resp.Responses["H"].Error.Error(), "headroom")
	require.Contains(t, resp.Responses["D"].Error.Error(), "drain")
}
