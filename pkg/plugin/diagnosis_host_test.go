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

// TestHostDiagnosis calls the fleet and saturation query types over gRPC,
// as Grafana does, against real Prometheus scraping the hot fleet, and
// shows that the saturation thresholds come from the data source settings.
func TestHostDiagnosis(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Start(t, fleettest.HotFleet(13))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_preemptions_total[1m]) >= 20`, 2, 90*time.Second)
	hot := env.Endpoints[0].Addr
	at := func(ref, js string) backend.DataQuery {
		now := time.Now()
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 500,
			TimeRange: backend.TimeRange{From: now.Add(-15 * time.Second), To: now}}
	}
	ds := func(uid, jsonData string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{UID: uid, URL: env.Prom.URL, JSONData: []byte(jsonData)}
	}
	verdicts := func(f *data.Frame) map[string]string {
		out := map[string]string{}
		for i := 0; i < f.Rows(); i++ {
			out[f.Fields[0].At(i).(string)] = f.Fields[1].At(i).(string)
		}
		return out
	}

	t.Run("fleet table, hot engines first", func(t *testing.T) {
		resp := host.QueryData(t, ds("diag", `{"scrapeInterval":"1s"}`), nil, at("F", `{"queryType":"fleet"}`))
		r := resp.Responses["F"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 1)
		f := r.Frames[0]
		require.Equal(t, data.FrameTypeTable, f.Meta.Type)
		require.Equal(t, 8, f.Rows(), "four instances of two engines")
		require.Equal(t, hot, f.Fields[0].At(0))
		require.Equal(t, hot, f.Fields[0].At(1))
		state, _ := f.FieldByName("state")
		require.NotNil(t, state, "the fleet table has a state column")
		require.Equal(t, "up", state.At(0))
	})

	t.Run("saturation verdicts with default thresholds", func(t *testing.T) {
		resp := host.QueryData(t, ds("diag", `{"scrapeInterval":"1s"}`), nil, at("S", `{"queryType":"saturation","format":"table"}`))
		r := resp.Responses["S"]
		require.NoError(t, r.Error)
		v := verdicts(r.Frames[0])
		require.Len(t, v, 4)
		require.Equal(t, "KV-bound — preempting", v[hot])
		for _, ep := range env.Endpoints[1:] {
			require.Equal(t, "ok", v[ep.Addr], ep.Addr)
		}
	})

	t.Run("thresholds come from the settings", func(t *testing.T) {
		// Preemptions count only from 1,000 per second: the hot instance's
		// queue is what remains.
		resp := host.QueryData(t, ds("diag-lax", `{"scrapeInterval":"1s","saturationPreemptions":1000}`), nil,
			at("S", `{"queryType":"saturation","format":"table","instances":["`+hot+`"]}`))
		r := resp.Responses["S"]
		require.NoError(t, r.Error)
		v := verdicts(r.Frames[0])
		require.Contains(t, []string{"queueing — add replicas", "overloaded"}, v[hot])
	})

	t.Run("a bad threshold is named", func(t *testing.T) {
		res := host.CheckHealth(t, ds("diag-bad", `{"saturationKvHigh":2}`))
		require.Equal(t, backend.HealthStatusError, res.Status)
		require.Contains(t, res.Message, "saturationKvHigh")
	})
}
