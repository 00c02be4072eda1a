package plugin_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// calmFleet is the second cluster's fleet: five single-engine Qwen
// servers, the fourth hot with a tiny KV cache (so it queues and preempts).
func calmFleet(seed uint64) sim.Config {
	cfg := fleettest.HotFleet(seed)
	hot := *cfg.Instances[0].Engine
	cfg.Instances = nil
	for i := 0; i < 5; i++ {
		ic := sim.InstanceConfig{Model: "Qwen/Qwen2.5-7B-Instruct", Engines: 1}
		if i == 3 {
			ic.RateFactor, ic.Engine = 4, &hot
		}
		cfg.Instances = append(cfg.Instances, ic)
	}
	return cfg
}

// sharedName is the instance label both clusters use for their i-th
// server: the fleets are told apart only by the cluster label.
func sharedName(i int) string { return fmt.Sprintf("vllm-%d:8000", i) }

// clusterGroups puts each server of a fleet in its own target group with
// the shared instance name, the cluster label, and Kubernetes-style
// namespace and pod labels (pod names repeat across namespaces).
func clusterGroups(env *fleettest.Env, cluster, namespace string) []promtest.Group {
	var gs []promtest.Group
	for i, addr := range env.Targets() {
		gs = append(gs, promtest.Group{Targets: []string{addr}, Labels: map[string]string{"cluster": cluster,
			"instance": sharedName(i), "namespace": namespace, "pod": fmt.Sprintf("vllm-%d", i)}})
	}
	return gs
}

// TestHostSelector runs two simulated fleets into one Prometheus, told
// apart only by the cluster label (same instance names, same model names),
// with a node agent per cluster, and checks that a data source scoped with
// the selector setting sees only its own fleet: health counts, every query
// type, resource routes and agent discovery.
func TestHostSelector(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	bin := filepath.Join(t.TempDir(), "vllm-node-agent")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vllm-node-agent")
	build.Dir = grafanahost.RepoRoot(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	a, b := fleettest.Run(t, fleettest.HotFleet(21)), fleettest.Run(t, calmFleet(22))
	agentA, _ := startAgent(t, bin, "node-a", "http://"+a.Endpoints[0].Addr+"/metrics")
	agentB, _ := startAgent(t, bin, "node-b", "http://"+b.Endpoints[0].Addr+"/metrics")
	srv := promtest.Start(t, promtest.Options{
		Groups: append(clusterGroups(a, "a", "inference"), clusterGroups(b, "b", "batch")...),
		AgentGroups: []promtest.Group{
			{Targets: []string{strings.TrimPrefix(agentA, "http://")}, Labels: map[string]string{"cluster": "a"}},
			{Targets: []string{strings.TrimPrefix(agentB, "http://")}, Labels: map[string]string{"cluster": "b"}},
		},
	})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 12`, 13, 60*time.Second)
	srv.WaitForSeries(t, `count_over_time(vllm:num_preemptions_total{instance="vllm-3:8000"}[1m]) >= 12`, 1, 60*time.Second)
	srv.WaitForSeries(t, `up{job="vllm-node-agent"} == 1`, 2, 30*time.Second)

	ds := func(uid, sel string) backend.DataSourceInstanceSettings {
		js, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "selector": sel})
		require.NoError(t, err)
		return backend.DataSourceInstanceSettings{UID: uid, URL: srv.URL, JSONData: js}
	}
	all, dsA, dsB := ds("all", ""), ds("a", `cluster="a"`), ds("b", `{cluster="b"}`)

	t.Run("health counts only what the selector sees, and says so", func(t *testing.T) {
		for _, tt := range []struct {
			ds   backend.DataSourceInstanceSettings
			want string
		}{
			{all, "9 engines on 5 instances serving 2 models"}, // the two fleets merged by instance name
			{dsA, `8 engines on 4 instances serving 2 models (only series matching the data source selector {cluster="a"} are counted)`},
			{dsB, `5 engines on 5 instances serving 1 model (only series matching the data source selector {cluster="b"} are counted)`},
			{ds("both", `cluster=~"a|b"`), "9 engines on 5 instances serving 2 models"},
		} {
			res := host.CheckHealth(t, tt.ds)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, tt.want)
		}
		res := host.CheckHealth(t, ds("none", `cluster="c"`))
		require.Equal(t, backend.HealthStatusError, res.Status)
		require.Contains(t, res.Message, `selector {cluster="c"}`)
	})

	t.Run("a selector that is not label matchers is rejected naming the setting", func(t *testing.T) {
		for _, sel := range []string{`cluster="a"} or vector(1) or {x="y"`, `cluster=a`, `__name__="up"`, `sum(up)`} {
			res := host.CheckHealth(t, ds("bad", sel))
			require.Equal(t, backend.HealthStatusError, res.Status, sel)
			require.Contains(t, res.Message, "selector", sel)
			resp := host.QueryData(t, ds("bad", sel), nil, at("Q", `{"queryType":"queue"}`))
			require.ErrorContains(t, resp.Responses["Q"].Error, "selector", sel)
		}
	})

	t.Run("every query type sees only its cluster", func(t *testing.T) {
		for _, tt := range []struct {
			ds        backend.DataSourceInstanceSettings
			instances int
			hot       string
			engines   float64
		}{
			{dsA, 4, sharedName(0), 8},
			{dsB, 5, sharedName(3), 5},
		} {
			resp := host.QueryData(t, tt.ds, nil,
				at("Q", `{"queryType":"queue","grouping":"instance"}`),
				at("W", `{"queryType":"waitTime","grouping":"instance","quantiles":[0.5]}`),
				at("P", `{"queryType":"preemptions"}`),
				at("R", `{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`),
				at("K", `{"queryType":"topk","k":1,"rankBy":"waiting","format":"table"}`),
				at("E", `{"queryType":"promql","expr":"count(vllm:num_requests_running)"}`),
			)
			for ref, r := range resp.Responses {
				require.NoError(t, r.Error, "%s %s", tt.ds.UID, ref)
			}
			running := seriesNames(resp.Responses["Q"].Frames, " running")
			require.Len(t, running, tt.instances, "%s: %v", tt.ds.UID, running)
			require.LessOrEqual(t, len(seriesNames(resp.Responses["W"].Frames, " p50")), tt.instances)
			require.Len(t, seriesNames(resp.Responses["R"].Frames, ""), tt.instances)
			require.Equal(t, tt.hot, resp.Responses["K"].Frames[0].Fields[1].At(0), "%s: the cluster's own hot server ranks first", tt.ds.UID)
			anno := resp.Responses["P"].Frames[0]
			require.Greater(t, anno.Rows(), 0, tt.ds.UID)
			for i := 0; i < anno.Rows(); i++ {
				require.Contains(t, anno.Fields[2].At(i).(string), tt.hot, "%s: only its own hot server preempts", tt.ds.UID)
			}
			e := resp.Responses["E"].Frames[0]
			require.Equal(t, tt.engines, lastValue(t, e), "%s: raw PromQL is scoped too: %s", tt.ds.UID, e.Meta.ExecutedQueryString)
			require.Contains(t, e.Meta.ExecutedQueryString, `cluster="`+tt.ds.UID+`"`)
		}
	})

	t.Run("per-query matchers narrow on any label", func(t *testing.T) {
		resp := host.QueryData(t, all, nil,
			at("B", `{"queryType":"queue","grouping":"instance","matchers":"cluster=\"b\", instance=~\"vllm-[34]:8000\""}`),
			at("X", `{"queryType":"queue","grouping":"instance","matchers":"cluster=\"b\"} or vector(1) or {a=\"b\""}`),
		)
		require.NoError(t, resp.Responses["B"].Error)
		require.ElementsMatch(t, []string{sharedName(3) + " running", sharedName(4) + " running"}, seriesNames(resp.Responses["B"].Frames, " running"))
		require.ErrorContains(t, resp.Responses["X"].Error, "matchers")
		require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["X"].ErrorSource)
		// A query can narrow its data source's scope, never widen it.
		resp = host.QueryData(t, dsA, nil, at("N", `{"queryType":"queue","matchers":"cluster=\"b\""}`))
		require.NoError(t, resp.Responses["N"].Error)
		require.False(t, hasData(resp.Responses["N"].Frames))
	})

	t.Run("identity namespace+pod: instanceLabel pod, selector on the namespace", func(t *testing.T) {
		js := `{"scrapeInterval":"1s","instanceLabel":"pod","selector":"namespace=\"batch\""}`
		pods := backend.DataSourceInstanceSettings{UID: "pods", URL: srv.URL, JSONData: []byte(js)}
		res := host.CheckHealth(t, pods)
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "5 engines on 5 instances serving 1 model")
		resp := host.QueryData(t, pods, nil,
			at("Q", `{"queryType":"queue","grouping":"instance"}`),
			at("K", `{"queryType":"topk","k":1,"rankBy":"waiting","format":"table"}`),
			at("P", `{"queryType":"preemptions"}`),
		)
		for ref, r := range resp.Responses {
			require.NoError(t, r.Error, ref)
		}
		require.ElementsMatch(t, []string{"vllm-0 running", "vllm-1 running", "vllm-2 running", "vllm-3 running", "vllm-4 running"},
			seriesNames(resp.Responses["Q"].Frames, " running"))
		require.Equal(t, "vllm-3", resp.Responses["K"].Frames[0].Fields[1].At(0))
		anno := resp.Responses["P"].Frames[0]
		require.Greater(t, anno.Rows(), 0)
		require.Contains(t, anno.Fields[2].At(0).(string), "vllm-3")
		r := host.CallResource(t, pods, "GET", "instances", nil)
		require.JSONEq(t, `["vllm-0","vllm-1","vllm-2","vllm-3","vllm-4"]`, string(r.Body))
	})

	t.Run("resource routes", func(t *testing.T) {
		for _, tt := range []struct {
			ds                    backend.DataSourceInstanceSettings
			models, engines, inst string
		}{
			{dsA, `["Qwen/Qwen2.5-7B-Instruct","meta-llama/Llama-3.1-8B-Instruct"]`, `["0","1"]`, `["vllm-0:8000","vllm-1:8000","vllm-2:8000","vllm-3:8000"]`},
			{dsB, `["Qwen/Qwen2.5-7B-Instruct"]`, `["0"]`, `["vllm-0:8000","vllm-1:8000","vllm-2:8000","vllm-3:8000","vllm-4:8000"]`},
		} {
			for path, want := range map[string]string{"models": tt.models, "engines?instance=vllm-0:8000": tt.engines, "instances": tt.inst} {
				res := host.CallResource(t, tt.ds, "GET", path, nil)
				require.Equal(t, 200, res.Status, string(res.Body))
				require.JSONEq(t, want, string(res.Body), "%s %s", tt.ds.UID, path)
			}
		}
	})

	t.Run("agent discovery finds only the cluster's agents", func(t *testing.T) {
		for _, tt := range []struct {
			ds          backend.DataSourceInstanceSettings
			node, other string
		}{{dsA, "node-a", "node-b"}, {dsB, "node-b", "node-a"}} {
			r := host.QueryData(t, tt.ds, nil, at("G", `{"queryType":"gpu"}`)).Responses["G"]
			require.NoError(t, r.Error)
			f := r.Frames[0]
			require.Equal(t, 2, f.Rows(), "%s: one agent with two GPUs", tt.ds.UID)
			_, idx := f.FieldByName("node")
			require.GreaterOrEqual(t, idx, 0)
			for i := 0; i < f.Rows(); i++ {
				require.Equal(t, tt.node, fmt.Sprint(deref(f.Fields[idx].At(i))))
			}
			require.NotContains(t, noticeText(f), tt.other)
		}
	})
}

func at(ref, js string) backend.DataQuery {
	now := time.Now()
	return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 500,
		TimeRange: backend.TimeRange{From: now.Add(-2 * time.Minute), To: now}}
}

// seriesNames lists the frame names that end in suffix.
func seriesNames(fs data.Frames, suffix string) []string {
	var out []string
	for _, f := range fs {
		if strings.HasSuffix(f.Name, suffix) && len(f.Fields) > 1 {
			out = append(out, f.Name)
		}
	}
	return out
}

func lastValue(t *testing.T, f *data.Frame) float64 {
	t.Helper()
	require.GreaterOrEqual(t, len(f.Fields), 2)
	n := f.Fields[1].Len()
	require.Greater(t, n, 0)
	v, ok := f.Fields[1].ConcreteAt(n - 1)
	require.True(t, ok)
	return v.(float64)
}

func deref(v any) any {
	switch p := v.(type) {
	case *string:
		if p != nil {
			return *p
		}
	}
	return v
}

// hasData reports whether any frame has a row.
func hasData(frames data.Frames) bool {
	for _, f := range frames {
		if f.Rows() > 0 {
			return true
		}
	}
	return false
}
