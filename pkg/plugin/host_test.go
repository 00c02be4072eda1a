package plugin_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/plugin"
)

// TestHost launches the built plugin binary over go-plugin, as Grafana does,
// and calls it over gRPC against a real Prometheus.
func TestHost(t *testing.T) {
	dir := grafanahost.Build(t)
	host := grafanahost.Launch(t, dir)

	require.Equal(t, "inferops-vllm-datasource", host.Plugin.ID)
	require.Equal(t, plugin.ID, host.Plugin.ID, "plugin.json id and the id the binary manages must agree")
	require.Equal(t, "datasource", host.Plugin.Type)
	require.True(t, host.Plugin.Alerting)
	require.True(t, host.Plugin.Annotations)

	srv := promtest.Start(t, promtest.Options{Targets: []string{
		promtest.ServeFile(t, "../health/testdata/v1.prom"),
		promtest.ServeFile(t, "../health/testdata/v1-dp2.prom"),
	}})
	srv.WaitForSeries(t, `vllm:num_requests_running`, 3, 30*time.Second)
	ds := backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}

	t.Run("CheckHealth reports the fleet", func(t *testing.T) {
		res := host.CheckHealth(t, ds)
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "vLLM V1 metrics found: 3 engines on 2 instances serving 1 model")
	})

	t.Run("CheckHealth names a bad setting", func(t *testing.T) {
		bad := backend.DataSourceInstanceSettings{UID: "bad", URL: srv.URL, JSONData: []byte(`{"instanceLabel":"a-b"}`)}
		res := host.CheckHealth(t, bad)
		require.Equal(t, backend.HealthStatusError, res.Status)
		require.Contains(t, res.Message, "instanceLabel")
	})

	t.Run("QueryData answers each query on its own", func(t *testing.T) {
		resp := host.QueryData(t, ds, nil,
			query("A", "queue", `{"queryType":"queue"}`),
			query("B", "", `{not json`),
			query("C", "bogus", `{"queryType":"bogus"}`),
		)
		require.Len(t, resp.Responses, 3)
		require.Contains(t, resp.Responses["B"].Error.Error(), "malformed query JSON")
		require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["B"].ErrorSource)
		require.Contains(t, resp.Responses["C"].Error.Error(), `unknown query type "bogus"; allowed: queue, waitTime`)
		require.NotNil(t, resp.Responses["A"].Error)
	})

	t.Run("CallResource refuses unknown paths", func(t *testing.T) {
		res := host.CallResource(t, ds, "GET", "api/v1/query?query=up", nil)
		require.Equal(t, 404, res.Status)
	})
}

func query(ref, qt, js string) backend.DataQuery {
	now := time.Now()
	return backend.DataQuery{RefID: ref, QueryType: qt, JSON: json.RawMessage(js), Interval: time.Second,
		MaxDataPoints: 100, TimeRange: backend.TimeRange{From: now.Add(-5 * time.Minute), To: now}}
}
