package plugin_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestHostScrapeHealth calls the fleet query and Save & test over gRPC, as
// Grafana does, against real Prometheus (2s scrapes) scraping two servers
// of the hot fleet: one through a proxy that answers 500 on every third
// scrape, one directly. The flaky server's engines read flapping, with
// the scrape columns filled, the steady one's up; Save & test names the
// flaky server only.
func TestHostScrapeHealth(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	cfg := fleettest.HotFleet(37)
	cfg.Instances = cfg.Instances[2:]
	env := fleettest.Run(t, cfg)
	flaky := promtest.FlakyTarget(t, env.Endpoints[0].Addr, promtest.Flaky{Status: http.StatusInternalServerError, Every: 3})
	steady := env.Endpoints[1].Addr
	srv := promtest.Start(t, promtest.Options{Targets: []string{flaky, steady}, ScrapeInterval: 2 * time.Second})
	srv.WaitForSeries(t, `changes(up[1m]) >= 2`, 1, 120*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "scrape", URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"2s"}`)}

	deadline := time.Now().Add(60 * time.Second)
	for {
		now := time.Now()
		resp := host.QueryData(t, ds, nil, backend.DataQuery{RefID: "F", JSON: json.RawMessage(`{"queryType":"fleet"}`),
			Interval: time.Second, MaxDataPoints: 500, TimeRange: backend.TimeRange{From: env.Started, To: now}})
		r := resp.Responses["F"]
		require.NoError(t, r.Error)
		f := r.Frames[0]
		require.Equal(t, 4, f.Rows(), "two servers of two engines")
		state, _ := f.FieldByName("state")
		secs, _ := f.FieldByName("scrape s")
		share, _ := f.FieldByName("scrape % of timeout")
		require.NotNil(t, secs)
		require.NotNil(t, share)
		if state.At(0) == "flapping" && state.At(1) == "flapping" {
			for i := range 4 {
				require.NotNil(t, secs.At(i), "row %d", i)
				require.NotNil(t, share.At(i), "row %d", i)
			}
			require.Equal(t, flaky, f.Fields[0].At(0))
			require.Equal(t, []any{"up", "up"}, []any{state.At(2), state.At(3)})
			break
		}
		require.True(t, time.Now().Before(deadline), "the flaky server never read flapping; states %v %v", state.At(0), state.At(1))
		time.Sleep(500 * time.Millisecond)
	}

	res := host.CheckHealth(t, ds)
	require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
	require.Contains(t, res.Message, "Warning: the scrapes of 1 vLLM server fail now and then or come near the scrape timeout: "+flaky+" (up changed ")
	require.NotContains(t, res.Message, steady)
}
