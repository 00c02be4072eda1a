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
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/plugin"
)

// TestHost launches the built plugin binary over go-plugin, as Grafana does,
// and calls it over gRPC against a real Prometheus.
func TestHost(t *testing.T) {
	t.Parallel()
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
		require.Contains(t, resp.Responses["C"].Error.Error(), `queryType "bogus" is unknown; allowed: queue, waitTime`)
		require.NoError(t, resp.Responses["A"].Error, "A valid query still answers beside bad ones")
	})

	t.Run("CallResource refuses unknown paths", func(t *testing.T) {
		res := host.CallResource(t, ds, "GET", "api/v1/query?query=up", nil)
		require.Equal(t, 404, res.Status, "no open proxy to Prometheus")
	})
}

func query(ref, qt, js string) backend.DataQuery {
	now := time.Now()
	return backend.DataQuery{RefID: ref, QueryType: qt, JSON: json.RawMessage(js), Interval: time.Second,
		MaxDataPoints: 100, TimeRange: backend.TimeRange{From: now.Add(-5 * time.Minute), To: now}}
}

// TestHostQueryTypes calls every query type over gRPC against real
// Prometheus scraping a simulated fleet, including the annotation path
// (RefID "Anno"), the alert path (header FromAlert) and resource routes.
func TestHostQueryTypes(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Start(t, fleettest.HotFleet(3))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 12`, 8, 60*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "fleet", URL: env.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	hot := env.Endpoints[0].Addr
	at := func(ref, js string) backend.DataQuery {
		now := time.Now()
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 500,
			TimeRange: backend.TimeRange{From: now.Add(-2 * time.Minute), To: now}}
	}

	t.Run("every query type", func(t *testing.T) {
		resp := host.QueryData(t, ds, nil,
			at("Q", `{"queryType":"queue"}`),
			at("W", `{"queryType":"waitTime","live":true}`),
			at("P", `{"queryType":"preemptions","asSeries":true}`),
			at("K", `{"queryType":"topk","k":2}`),
			at("G", `{"queryType":"gpu"}`),
			at("C", `{"queryType":"container"}`),
		)
		for _, ref := range []string{"Q", "W", "P", "K"} {
			r := resp.Responses[ref]
			require.NoError(t, r.Error, ref)
			require.NotEmpty(t, r.Frames, ref)
			require.Equal(t, data.FrameTypeTimeSeriesMulti, r.Frames[0].Meta.Type, ref)
			require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "Expr: ", ref)
		}
		k := resp.Responses["K"].Frames
		require.Len(t, k, 3, "two series and the table")
		require.Equal(t, hot, k[2].Fields[1].At(0))
		require.Error(t, resp.Responses["G"].Error, "gpu needs node agents")
		c := resp.Responses["C"]
		require.NoError(t, c.Error, "no cAdvisor is a notice, not an error")
		require.Contains(t, c.Frames[0].Meta.Notices[0].Text, "No cAdvisor is scraped")
	})

	t.Run("annotation query", func(t *testing.T) {
		resp := host.QueryData(t, ds, nil, at("Anno", `{"queryType":"preemptions"}`))
		r := resp.Responses["Anno"]
		require.NoError(t, r.Error)
		f := r.Frames[0]
		for _, name := range []string{"time", "timeEnd", "title", "text", "tags"} {
			_, idx := f.FieldByName(name)
			require.GreaterOrEqual(t, idx, 0, "annotation field %s", name)
		}
		require.Greater(t, f.Rows(), 0, "the hot instance preempts")
	})

	t.Run("alert path", func(t *testing.T) {
		headers := map[string]string{backend.FromAlertHeaderName: "true"}
		resp := host.QueryData(t, ds, headers,
			at("A", `{"queryType":"queue","grouping":"instance","interval":"$__rate_interval"}`),
			at("B", `{"queryType":"waitTime","quantiles":[0.99],"models":["$model"]}`),
		)
		a := resp.Responses["A"]
		require.NoError(t, a.Error)
		seen := map[string]bool{}
		for _, f := range a.Frames {
			require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
			require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion, "alerting needs a non-zero type version")
			key := f.Fields[1].Labels.String()
			require.False(t, seen[key], "alerting needs unique label sets: %s", key)
			seen[key] = true
		}
		require.ErrorContains(t, resp.Responses["B"].Error, "$model")
		require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["B"].ErrorSource)
	})

	t.Run("resource routes", func(t *testing.T) {
		res := host.CallResource(t, ds, "GET", "models", nil)
		require.Equal(t, 200, res.Status, string(res.Body))
		require.JSONEq(t, `["Qwen/Qwen2.5-7B-Instruct","meta-llama/Llama-3.1-8B-Instruct"]`, string(res.Body))
		res = host.CallResource(t, ds, "GET", "engines?instance="+hot, nil)
		require.Equal(t, 200, res.Status, string(res.Body))
		require.JSONEq(t, `["0","1"]`, string(res.Body))
		res = host.CallResource(t, ds, "GET", "instances?model=Qwen%2FQwen2.5-7B-Instruct", nil)
		var insts []string
		require.NoError(t, json.Unmarshal(res.Body, &insts))
		require.Len(t, insts, 2)
	})
}
