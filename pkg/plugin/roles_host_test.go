package plugin_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
)

// TestHostKVTransferAndRoles runs kvTransfer and a role-grouped queue
// through the built plugin binary over gRPC, against a disaggregated
// simulated fleet scraped with KServe's llm_isvc_role, as an alert rule
// asks: every frame is an alertable timeseries-multi with a unique label
// set carrying its role, and a data source whose roleLabel names a label
// the series lack answers with one group and a notice, not an error.
func TestHostKVTransferAndRoles(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.StartRoles(t, fleettest.PDFleet(41))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:nixl_xfer_time_seconds_count{llm_isvc_role="decode"}[1m]) >= 5`, 4, 90*time.Second)
	now := time.Now()
	query := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
	}
	ds := backend.DataSourceInstanceSettings{UID: "roles", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	resp := host.QueryData(t, ds, map[string]string{backend.FromAlertHeaderName: "true"},
		query("K", `{"queryType":"kvTransfer","quantiles":[0.5,0.99]}`), query("Q", `{"queryType":"queue","grouping":"role"}`))
	for ref, want := range map[string][]string{
		"K": {"decode p50", "decode p99", "decode transfers", "decode bytes", "decode failed_transfers", "prefill expired_requests"},
		"Q": {"decode running", "prefill running", "decode waiting", "prefill waiting"},
	} {
		r := resp.Responses[ref]
		require.NoError(t, r.Error, ref)
		names := map[string]bool{}
		seen := map[string]bool{}
		for _, f := range r.Frames {
			require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
			key := f.Fields[1].Labels.String()
			require.False(t, seen[key], "alerting needs unique label sets: %s", key)
			seen[key] = true
			require.Contains(t, []string{"prefill", "decode"}, f.Fields[1].Labels["role"], f.Name)
			names[f.Name] = true
		}
		for _, n := range want {
			require.True(t, names[n], "%s: no %q among %v", ref, n, names)
		}
	}

	other := backend.DataSourceInstanceSettings{UID: "roles-other", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s","roleLabel":"pd_role"}`)}
	r := host.QueryData(t, other, nil, query("Q", `{"queryType":"queue","grouping":"role"}`)).Responses["Q"]
	require.NoError(t, r.Error)
	var notices []string
	for _, f := range r.Frames {
		require.NotContains(t, f.Name, "decode")
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				notices = append(notices, n.Text)
			}
		}
	}
	require.Contains(t, strings.Join(notices, "\n"), "no role label on the series: looked for pd_role")
}
