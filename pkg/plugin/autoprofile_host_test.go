package plugin_test

import (
	"encoding/json"
	"path/filepath"
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

// kserveRelabel is what KServe's LLMInferenceService monitors do to every
// series they scrape (the controller's PodMonitor for the vLLM pods, the
// scheduler's ServiceMonitor for the endpoint picker): __name__ becomes
// kserve_<name>. Here it applies to the namespace kserve-llm only.
const kserveRelabel = `      - source_labels: [namespace, __name__]
        regex: "kserve-llm;(.+)"
        target_label: __name__
        replacement: "kserve_$1"
`

// autoFleet is a KServe LLMInferenceService (a decode pod, hot, with two
// engines, and a prefill pod), a production-stack release (two engine
// pods) and a V0 engine pod scraped by a user's own monitor (plain vllm:
// names), each in its own namespace.
func autoFleet(seed uint64) (sim.Config, []k8sTarget) {
	cfg := fleettest.HotFleet(seed)
	hot := *cfg.Instances[0].Engine
	cfg.Instances = nil
	llama := "meta-llama/Llama-3.1-8B-Instruct"
	// KServe's PodMonitor gives the LLMInferenceService's target labels
	// (llm_isvc_role from the pod label llm-d.ai/role); static labels do
	// the same here.
	isvc := func(pod, role, component string) k8sTarget {
		return k8sTarget{namespace: "kserve-llm", pod: pod, container: "main", port: "https", podMonitor: "kserve-llm-isvc-vllm-engine",
			extra: map[string]string{"llm_isvc_name": "llama", "llm_isvc_role": role, "llm_isvc_component": component}}
	}
	ps := func(pod string) k8sTarget {
		return k8sTarget{namespace: "pstack", pod: pod, container: "vllm", port: "service-port", service: "rel-llama-engine-service"}
	}
	targets := []struct {
		k8s     k8sTarget
		engines int
		hot     bool
	}{
		{isvc("vllm-0", "decode", "workload"), 2, true}, {isvc("vllm-1", "prefill", "workload-prefill"), 1, false},
		{ps("vllm-0"), 2, true}, {ps("vllm-1"), 2, false},
		{k8sTarget{namespace: "kserve-own", pod: "vllm-0", container: "main", port: "metrics", service: "own-vllm"}, 1, false},
	}
	var out []k8sTarget
	for _, tg := range targets {
		ic := sim.InstanceConfig{Model: llama, Engines: tg.engines}
		if tg.k8s.namespace == "kserve-own" {
			ic.Generation = sim.V0
		}
		if tg.hot {
			ic.RateFactor, ic.Engine = 4, &hot
		}
		cfg.Instances = append(cfg.Instances, ic)
		out = append(out, tg.k8s)
	}
	return cfg, out
}

// TestHostAutoProfile runs a KServe LLMInferenceService fleet scraped
// through KServe's renaming, and a production-stack release with its
// router, through real Prometheus and the plugin binary: the kserve
// profile and auto both find the KServe fleet per pod, with the endpoint
// picker's renamed gauges; auto on production-stack leaves the router out.
func TestHostAutoProfile(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	cfg, k8s := autoFleet(37)
	env := fleettest.Run(t, cfg)
	var groups []promtest.Group
	for i, addr := range env.Targets() {
		groups = append(groups, k8s[i].group(addr))
	}
	router := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "production-stack-router.prom"))
	epp := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "llm-d-epp.prom"))
	groups = append(groups,
		k8sTarget{namespace: "pstack", pod: "rel-router-0", container: "router", port: "router-sport", service: "rel-router-service"}.group(router),
		k8sTarget{namespace: "kserve-llm", pod: "llama-epp-0", container: "main", port: "metrics", service: "llama-epp-service"}.group(epp))
	srv := promtest.Start(t, promtest.Options{Groups: groups, Relabel: operatorRelabel, MetricRelabel: kserveRelabel})
	srv.WaitForSeries(t, `count_over_time({__name__=~"(kserve_)?vllm:num_requests_running", model_name!=""}[1m]) >= 12`, 8, 60*time.Second)
	require.Len(t, srv.Query(t, `kserve_vllm:num_requests_running{namespace="kserve-llm", llm_isvc_name="llama", llm_isvc_role="decode", pod="vllm-0"}`), 2)
	require.Len(t, srv.Query(t, `kserve_inference_pool_ready_pods{namespace="kserve-llm"}`), 1)
	require.Empty(t, srv.Query(t, `vllm:num_requests_running{namespace="kserve-llm"}`), "every KServe series is renamed")

	ds := func(uid, profile, namespace string) backend.DataSourceInstanceSettings {
		js := map[string]any{"scrapeInterval": "1s", "selector": `namespace="` + namespace + `"`}
		if profile != "" {
			js["profile"] = profile
		}
		raw, err := json.Marshal(js)
		require.NoError(t, err)
		return backend.DataSourceInstanceSettings{UID: uid, URL: srv.URL, JSONData: raw}
	}

	for _, profile := range []string{"kserve", "auto", ""} {
		t.Run("kserve fleet, profile "+profile, func(t *testing.T) {
			d := ds("ks-"+profile, profile, "kserve-llm")
			res := host.CheckHealth(t, d)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, "3 engines on 2 instances serving 1 model")
			if profile != "kserve" {
				require.Contains(t, res.Message, "Profile auto: kserve (KServe: ", res.Message)
			}
			pods := []string{"kserve-llm/vllm-0", "kserve-llm/vllm-1"}
			resp := host.QueryData(t, d, nil,
				at("Q", `{"queryType":"queue","grouping":"instance"}`),
				at("F", `{"queryType":"fleet"}`),
				at("K", `{"queryType":"topk","k":2,"rankBy":"waiting","format":"table"}`))
			for ref, r := range resp.Responses {
				require.NoError(t, r.Error, ref)
			}
			q := resp.Responses["Q"].Frames
			require.ElementsMatch(t, suffixed(pods, " running"), seriesNames(q, " running"))
			require.ElementsMatch(t, suffixed(pods, " waiting"), seriesNames(q, " waiting"))
			require.ElementsMatch(t, suffixed(pods, " picker_waiting"), seriesNames(q, " picker_waiting"),
				"the endpoint picker's gauges under KServe's kserve_ names")
			require.Equal(t, 40.0, lastValue(t, frameNamed(t, q, "kserve-llm/vllm-1 picker_waiting")))

			col := columns(resp.Responses["F"].Frames[0])["instance"]
			require.NotNil(t, col)
			seen := map[string]bool{}
			for i := 0; i < col.Len(); i++ {
				seen[col.At(i).(string)] = true
			}
			require.Equal(t, map[string]bool{pods[0]: true, pods[1]: true}, seen, "one fleet row set per pod")
			require.Equal(t, pods[0], resp.Responses["K"].Frames[0].Fields[1].At(0), "the hot decode pod ranks first")

			r := host.CallResource(t, d, "GET", "instances", nil)
			require.Equal(t, 200, r.Status, string(r.Body))
			var got []string
			require.NoError(t, json.Unmarshal(r.Body, &got))
			require.Equal(t, pods, got)
		})
	}

	// Under kserve, an engine whose series keep plain vllm: names (a
	// user's own monitor) gets its generation from its markers like the
	// renamed ones: a V0 engine has no engine label to fall back on.
	t.Run("kserve generation column over both prefixes", func(t *testing.T) {
		d := ds("ks-gen", "kserve", "kserve-llm")
		raw, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "profile": "kserve", "selector": `namespace=~"kserve-llm|kserve-own"`})
		require.NoError(t, err)
		d.JSONData = raw
		resp := host.QueryData(t, d, nil, at("F", `{"queryType":"fleet"}`))
		require.NoError(t, resp.Responses["F"].Error)
		cols := columns(resp.Responses["F"].Frames[0])
		inst, gen := cols["instance"], cols["generation"]
		require.NotNil(t, inst)
		require.NotNil(t, gen)
		got := map[string]string{}
		for i := 0; i < inst.Len(); i++ {
			got[inst.At(i).(string)] = gen.At(i).(string)
		}
		require.Equal(t, map[string]string{"kserve-llm/vllm-0": "V1", "kserve-llm/vllm-1": "V1", "kserve-own/vllm-0": "V0"}, got)
	})

	t.Run("production-stack under auto leaves the router out", func(t *testing.T) {
		d := ds("ps-auto", "", "pstack")
		res := host.CheckHealth(t, d)
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "4 engines on 2 instances serving 1 model")
		require.Contains(t, res.Message, "Profile auto: production-stack (vLLM production-stack: ")
		require.NotContains(t, res.Message, "does not fit")

		resp := host.QueryData(t, d, nil,
			at("T", `{"queryType":"queue","grouping":"none"}`),
			at("E", `{"queryType":"promql","expr":"sum(vllm:num_requests_waiting{namespace=\"pstack\", model_name!=\"\"})"}`),
			at("K", `{"queryType":"topk","k":3,"rankBy":"waiting","format":"table"}`))
		for ref, r := range resp.Responses {
			require.NoError(t, r.Error, ref)
		}
		// Compared a few steps back: the newest step may gain a sample
		// between the two queries.
		waiting := frameNamed(t, resp.Responses["T"].Frames, "waiting")
		n := waiting.Fields[0].Len()
		require.Greater(t, n, 3)
		when, v := timeAt(t, waiting.Fields[0], n-3), floatAt(t, waiting.Fields[1], n-3)
		engines := resp.Responses["E"].Frames[0]
		found := false
		for i := 0; i < engines.Fields[0].Len(); i++ {
			if timeAt(t, engines.Fields[0], i).Equal(when) {
				found = true
				require.Equal(t, floatAt(t, engines.Fields[1], i), v, "the engines' waiting at %s, never the router's 600 on top", when)
			}
		}
		require.True(t, found, "the engines' sum has the step %s", when)
		require.Less(t, v, 600.0)

		table := resp.Responses["K"].Frames[0]
		require.Equal(t, 2, table.Rows(), "two engine pods; the router is not a server")
		for i := 0; i < table.Rows(); i++ {
			require.Contains(t, []string{"pstack/vllm-0", "pstack/vllm-1"}, table.Fields[1].At(i))
		}

		r := host.CallResource(t, d, "GET", "instances", nil)
		require.JSONEq(t, `["pstack/vllm-0","pstack/vllm-1"]`, string(r.Body))
	})
}

func timeAt(t *testing.T, f *data.Field, i int) time.Time {
	t.Helper()
	v, ok := f.ConcreteAt(i)
	require.True(t, ok)
	return v.(time.Time)
}

func floatAt(t *testing.T, f *data.Field, i int) float64 {
	t.Helper()
	v, ok := f.ConcreteAt(i)
	require.True(t, ok, "a value at step %d", i)
	return v.(float64)
}
