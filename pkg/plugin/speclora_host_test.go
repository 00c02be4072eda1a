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

// TestHostSpecDecodeAndLoRA runs the specDecode and lora queries through
// the built plugin binary over gRPC against a simulated fleet that runs
// speculative decoding and LoRA: specDecode frames are alertable, the lora
// table has a row per instance, its series two per instance, and a bad
// format is refused with the allowed values.
func TestHostSpecDecodeAndLoRA(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	cfg := fleettest.HotFleet(41)
	cfg.Engine.SpecTokens, cfg.Engine.SpecAcceptance, cfg.Engine.LoRAAdapters, cfg.Engine.MaxLoRAs = 2, 0.8, 4, 2
	hot := *cfg.Instances[0].Engine
	hot.SpecTokens, hot.SpecAcceptance, hot.LoRAAdapters, hot.MaxLoRAs = 2, 0.8, 4, 2
	cfg.Instances[0].Engine = &hot
	env := fleettest.Start(t, cfg)
	env.Prom.WaitForSeries(t, `count_over_time(vllm:spec_decode_num_drafts_total[1m]) >= 10`, 8, 90*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "speclora", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	at := func(ref, js string) backend.DataQuery {
		now := time.Now()
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 200,
			TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
	}

	t.Run("specDecode on the alert path", func(t *testing.T) {
		resp := host.QueryData(t, ds, map[string]string{backend.FromAlertHeaderName: "true"}, at("S", `{"queryType":"specDecode"}`))
		r := resp.Responses["S"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, len(env.Endpoints)*4, "acceptance rate, mean length and two positions per instance")
		seen := map[string]bool{}
		for _, f := range r.Frames {
			require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
			require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
			key := f.Fields[1].Labels.String()
			require.False(t, seen[key], "alerting needs unique label sets: %s", key)
			seen[key] = true
		}
		require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "spec_decode_num_draft_tokens_total")
	})

	t.Run("lora table, series and a bad format", func(t *testing.T) {
		resp := host.QueryData(t, ds, nil,
			at("T", `{"queryType":"lora"}`),
			at("S", `{"queryType":"lora","format":"series"}`),
			at("B", `{"queryType":"lora","format":"graph"}`),
		)
		table := resp.Responses["T"]
		require.NoError(t, table.Error)
		require.Len(t, table.Frames, 1)
		require.Equal(t, data.FrameTypeTable, table.Frames[0].Meta.Type)
		require.Equal(t, len(env.Endpoints), table.Frames[0].Rows())
		series := resp.Responses["S"]
		require.NoError(t, series.Error)
		require.Len(t, series.Frames, 2*len(env.Endpoints))
		require.ErrorContains(t, resp.Responses["B"].Error, `format "graph" is unknown; allowed: table, series`)
		require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["B"].ErrorSource)
	})
}
