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

// TestHostPrefixCache runs the prefixCache query through the built plugin
// binary over gRPC, against real Prometheus scraping a simulated fleet:
// one hit-rate series per instance, a share in [0, 1] shown as a percent,
// and frames alerting can read (unique label sets, type version 0.1).
func TestHostPrefixCache(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Start(t, fleettest.HotFleet(41))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:prefix_cache_queries_total[1m]) >= 12`, 8, 60*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "prefix", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	now := time.Now()
	q := backend.DataQuery{RefID: "C", QueryType: "prefixCache", JSON: json.RawMessage(`{"queryType":"prefixCache","grouping":"instance"}`),
		Interval: time.Second, MaxDataPoints: 500, TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}

	for name, headers := range map[string]map[string]string{"panel": nil, "alert": {backend.FromAlertHeaderName: "true"}} {
		t.Run(name, func(t *testing.T) {
			r := host.QueryData(t, ds, headers, q).Responses["C"]
			require.NoError(t, r.Error)
			hit := map[string]*data.Frame{}
			seen := map[string]bool{}
			for _, f := range r.Frames {
				require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
				require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
				key := f.Fields[1].Labels.String()
				require.False(t, seen[key], "alerting needs unique label sets: %s", key)
				seen[key] = true
				if f.Fields[1].Labels["signal"] == "hit_rate" {
					hit[f.Fields[1].Labels["instance"]] = f
				}
			}
			require.Len(t, hit, len(env.Endpoints), "one hit-rate series per instance")
			for inst, f := range hit {
				require.Equal(t, "percentunit", f.Fields[1].Config.Unit, inst)
				v := f.Fields[1].At(f.Rows() - 1).(float64)
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0), inst)
				require.GreaterOrEqual(t, v, 0.0, inst)
				require.LessOrEqual(t, v, 1.0, inst)
			}
			require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "prefix_cache_hits_total")
		})
	}
}
