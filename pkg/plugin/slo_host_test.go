package plugin_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
)

// TestHostSLO runs the slo query through the built plugin binary over
// gRPC, as a Grafana alert rule does: the frames are alertable (unique
// label sets, a typed timeseries-multi), and the hot instance, which
// queues, burns its TTFT budget faster than the idle ones.
func TestHostSLO(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Start(t, fleettest.HotFleet(17))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:time_to_first_token_seconds_count[1m]) >= 20`, 8, 60*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "slo", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	now := time.Now()
	q := backend.DataQuery{RefID: "S", JSON: json.RawMessage(`{"queryType":"slo","family":"ttft","threshold":0.25,"target":0.99,"window":"1h","grouping":"instance"}`),
		Interval: time.Second, MaxDataPoints: 100, TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
	resp := host.QueryData(t, ds, map[string]string{backend.FromAlertHeaderName: "true"}, q)
	r := resp.Responses["S"]
	require.NoError(t, r.Error)
	seen := map[string]bool{}
	last := map[string]float64{}
	for _, f := range r.Frames {
		require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
		require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
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
	require.Len(t, r.Frames, len(env.Endpoints)*6, "attainment, budget and four burn pairs per instance")
	hot, cold := env.Endpoints[0].Addr, env.Endpoints[1].Addr
	require.Greater(t, last[hot+" burn_1h_5m"], last[cold+" burn_1h_5m"], "burn rates: %v", last)
	require.Less(t, last[hot+" attainment"], last[cold+" attainment"])
	for name, v := range last {
		require.False(t, math.IsInf(v, 0), name)
	}
}
