package plugin_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
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

// k8sTarget is one scrape target as Kubernetes service discovery hands
// it to prometheus-operator's generated relabelling: the __meta labels
// the operator reads, plus the PodMonitor's name where a PodMonitor
// selects it (the operator writes job=<namespace>/<podmonitor>).
type k8sTarget struct {
	namespace, pod, container, port, service, podMonitor string
	extra                                                map[string]string
}

func (k k8sTarget) group(addr string) promtest.Group {
	ls := map[string]string{
		"__meta_kubernetes_namespace": k.namespace, "__meta_kubernetes_pod_name": k.pod,
		"__meta_kubernetes_pod_container_name": k.container, "__meta_kubernetes_pod_container_port_name": k.port,
		"__meta_kubernetes_service_name": k.service, "__tmp_podmonitor": k.podMonitor,
	}
	for n, v := range k.extra {
		ls[n] = v
	}
	return promtest.Group{Targets: []string{addr}, Labels: ls}
}

// operatorRelabel reproduces the target labels prometheus-operator's
// ServiceMonitors and PodMonitors give (pkg/prometheus/promcfg.go):
// namespace, pod, container, endpoint (the port name), service, and job
// = the Service name (ServiceMonitor) or <namespace>/<podmonitor>.
// instance stays <address>, the pod IP and port on a cluster.
const operatorRelabel = `      - source_labels: [__meta_kubernetes_namespace]
        target_label: namespace
      - source_labels: [__meta_kubernetes_pod_name]
        target_label: pod
      - source_labels: [__meta_kubernetes_pod_container_name]
        target_label: container
      - source_labels: [__meta_kubernetes_pod_container_port_name]
        target_label: endpoint
      - source_labels: [__meta_kubernetes_service_name]
        target_label: service
      - source_labels: [__meta_kubernetes_service_name]
        regex: (.+)
        target_label: job
      - source_labels: [__meta_kubernetes_namespace, __tmp_podmonitor]
        separator: /
        regex: (.+/.+)
        target_label: job
`

// stackRelabel gives the simulator the shapes of the stacks that differ
// from vLLM's own exposition: Ray Serve's names (ray_vllm: on older, and
// ray_vllm_ on current releases) and an older server without the engine
// label.
const stackRelabel = `      - source_labels: [namespace, pod]
        regex: kserve;vllm-1
        target_label: engine
        replacement: ""
      - source_labels: [ReplicaId, __name__]
        regex: "qwen#a1b2;vllm:(.+)"
        target_label: __name__
        replacement: "ray_vllm:$1"
      - source_labels: [ReplicaId, __name__]
        regex: "qwen#c3d4;vllm:(.+)"
        target_label: __name__
        replacement: "ray_vllm_$1"
`

// stackFleet is one simulated server per target below, the first of
// each stack hot (four times the arrivals, a tiny KV cache) so it queues
// and preempts. kserve/vllm-1 and the Ray replicas run one engine each.
func stackFleet(seed uint64) (sim.Config, []k8sTarget) {
	cfg := fleettest.HotFleet(seed)
	hot := *cfg.Instances[0].Engine
	cfg.Instances = nil
	llama, qwen := "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"
	ps := func(pod string) k8sTarget {
		return k8sTarget{namespace: "pstack", pod: pod, container: "vllm", port: "service-port", service: "rel-llama-engine-service"}
	}
	llmd := func(pod string) k8sTarget {
		return k8sTarget{namespace: "llmd", pod: pod, container: "vllm", port: "metrics", podMonitor: "llama-decode-podmonitor"}
	}
	ks := func(pod string) k8sTarget {
		return k8sTarget{namespace: "kserve", pod: pod, container: "kserve-container", port: "http", podMonitor: "kserve-pods"}
	}
	ray := func(replica string) k8sTarget {
		return k8sTarget{namespace: "ray", pod: "raycluster-worker-0", container: "ray-worker", port: "metrics",
			podMonitor: "ray-workers-monitor", extra: map[string]string{"ReplicaId": replica}}
	}
	targets := []struct {
		k8s     k8sTarget
		model   string
		engines int
		hot     bool
	}{
		{ps("vllm-0"), llama, 2, true}, {ps("vllm-1"), llama, 2, false},
		{llmd("vllm-0"), qwen, 2, true}, {llmd("vllm-1"), qwen, 1, false},
		{ks("vllm-0"), qwen, 2, true}, {ks("vllm-1"), qwen, 1, false},
		{ray("qwen#a1b2"), qwen, 1, true}, {ray("qwen#c3d4"), qwen, 1, false},
	}
	var out []k8sTarget
	for _, tg := range targets {
		ic := sim.InstanceConfig{Model: tg.model, Engines: tg.engines}
		if tg.hot {
			ic.RateFactor, ic.Engine = 4, &hot
		}
		cfg.Instances = append(cfg.Instances, ic)
		out = append(out, tg.k8s)
	}
	return cfg, out
}

// TestHostStackProfiles runs a fleet shaped like each stack (the
// simulator behind the operator's relabelling, production-stack's router
// and llm-d's endpoint picker as fixture exporters) through real
// Prometheus and the plugin binary, one data source per stack scoped to
// its namespace: health names the stack, every query type answers with
// pod (or Ray replica) identity, and nothing is double counted.
func TestHostStackProfiles(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	cfg, k8s := stackFleet(31)
	env := fleettest.Run(t, cfg)
	var groups []promtest.Group
	for i, addr := range env.Targets() {
		groups = append(groups, k8s[i].group(addr))
	}
	router := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "production-stack-router.prom"))
	epp := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "llm-d-epp.prom"))
	groups = append(groups,
		k8sTarget{namespace: "pstack", pod: "rel-router-0", container: "router", port: "router-sport", service: "rel-router-service"}.group(router),
		k8sTarget{namespace: "llmd", pod: "llama-pool-epp-0", container: "epp", port: "http-metrics", service: "llama-pool-epp"}.group(epp))
	dcgmOld := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "dcgm-exporter-4.5.prom"))
	dcgmNew := promtest.ServeFile(t, filepath.Join("testdata", "k8s", "dcgm-exporter-4.6.prom"))
	srv := promtest.Start(t, promtest.Options{Groups: groups, Relabel: operatorRelabel, MetricRelabel: stackRelabel,
		ExtraJobs: dcgmJob("dcgm-exporter", false, dcgmOld, "nvidia-dcgm-exporter-h7x4n") +
			dcgmJob("dcgm-exporter-honor", true, dcgmNew, "nvidia-dcgm-exporter-q2m9z")})
	srv.WaitForSeries(t, `count_over_time({__name__=~"(ray_)?vllm.num_requests_running", model_name!=""}[1m]) >= 12`, 12, 60*time.Second)
	srv.WaitForSeries(t, `max by (namespace) ({__name__=~"(ray_)?vllm.num_preemptions_total"}) > 0`, 4, 90*time.Second)

	ds := func(uid, profile, namespace string) backend.DataSourceInstanceSettings {
		js, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "profile": profile, "selector": `namespace="` + namespace + `"`})
		require.NoError(t, err)
		return backend.DataSourceInstanceSettings{UID: uid, URL: srv.URL, JSONData: js}
	}

	t.Run("the operator's target labels", func(t *testing.T) {
		for expr, n := range map[string]int{
			`vllm:num_requests_running{namespace="pstack", job="rel-llama-engine-service", service="rel-llama-engine-service", container="vllm", endpoint="service-port", pod="vllm-0"}`: 2,
			`vllm:num_requests_running{namespace="llmd", job="llmd/llama-decode-podmonitor", container="vllm", endpoint="metrics", service=""}`:                                          3,
			`vllm:num_requests_running{namespace="pstack", server!="", model_name=""}`:                                                                                                   2,
			`vllm:num_requests_running{namespace="kserve", pod="vllm-1", engine=""}`:                                                                                                     1,
			`ray_vllm:num_requests_running{namespace="ray", pod="raycluster-worker-0", job="ray/ray-workers-monitor"}`:                                                                   1,
			`ray_vllm_num_requests_running{namespace="ray", ReplicaId="qwen#c3d4"}`:                                                                                                      1,
		} {
			require.Len(t, srv.Query(t, expr), n, expr)
		}
	})

	tests := []struct {
		profile, namespace, stack string
		summary                   string
		instances                 []string
		hot                       string
		total                     string // raw PromQL for the engines' true total of running requests
	}{
		{"production-stack", "pstack", "vLLM production-stack", "4 engines on 2 instances serving 1 model",
			[]string{"pstack/vllm-0", "pstack/vllm-1"}, "pstack/vllm-0", `sum(vllm:num_requests_running{model_name!=""})`},
		{"llm-d", "llmd", "llm-d", "3 engines on 2 instances serving 1 model",
			[]string{"llmd/vllm-0", "llmd/vllm-1"}, "llmd/vllm-0", `sum(vllm:num_requests_running)`},
		{"kserve", "kserve", "KServe", "3 engines on 2 instances serving 1 model",
			[]string{"kserve/vllm-0", "kserve/vllm-1"}, "kserve/vllm-0", `sum(vllm:num_requests_running)`},
		{"ray-serve", "ray", "Ray Serve", "2 engines on 2 instances serving 1 model",
			[]string{"ray/qwen#a1b2", "ray/qwen#c3d4"}, "ray/qwen#a1b2", `sum({__name__=~"ray_vllm.num_requests_running"})`},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			d := ds(tt.profile, tt.profile, tt.namespace)
			res := host.CheckHealth(t, d)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, tt.summary)
			require.Contains(t, res.Message, "Stack: "+tt.stack+" (")
			require.Contains(t, res.Message, "; profile "+tt.profile)

			expr, err := json.Marshal(tt.total)
			require.NoError(t, err)
			resp := host.QueryData(t, d, nil,
				at("Q", `{"queryType":"queue","grouping":"instance"}`),
				at("T", `{"queryType":"queue","grouping":"none"}`),
				at("W", `{"queryType":"waitTime","grouping":"instance","quantiles":[0.5]}`),
				at("P", `{"queryType":"preemptions"}`),
				at("R", `{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`),
				at("K", `{"queryType":"topk","k":2,"rankBy":"waiting","format":"table"}`),
				at("E", `{"queryType":"promql","expr":`+string(expr)+`}`),
			)
			for ref, r := range resp.Responses {
				require.NoError(t, r.Error, ref)
			}
			require.ElementsMatch(t, suffixed(tt.instances, " running"), seriesNames(resp.Responses["Q"].Frames, " running"))
			require.Subset(t, suffixed(tt.instances, " p50"), seriesNames(resp.Responses["W"].Frames, " p50"))
			require.Subset(t, suffixed(tt.instances, " preemption_rate"), seriesNames(resp.Responses["R"].Frames, " preemption_rate"))
			require.NotEmpty(t, seriesNames(resp.Responses["R"].Frames, " preemption_rate"))

			table := resp.Responses["K"].Frames[0]
			require.Equal(t, 2, table.Rows())
			require.Equal(t, tt.hot, table.Fields[1].At(0), "the hot server ranks first")
			require.Contains(t, tt.instances, table.Fields[1].At(1))

			anno := resp.Responses["P"].Frames[0]
			require.Greater(t, anno.Rows(), 0)
			for i := 0; i < anno.Rows(); i++ {
				require.Contains(t, anno.Fields[2].At(i).(string), "Preemptions on "+tt.hot+" engine")
			}

			running := runningFrame(t, resp.Responses["T"].Frames)
			total := resp.Responses["E"].Frames[0]
			require.Equal(t, lastValue(t, total), lastValue(t, running),
				"the engines' total, never the router's series on top: %s", total.Meta.ExecutedQueryString)
			require.Less(t, lastValue(t, running), 500.0)

			r := host.CallResource(t, d, "GET", "instances", nil)
			require.Equal(t, 200, r.Status, string(r.Body))
			var got []string
			require.NoError(t, json.Unmarshal(r.Body, &got))
			require.Equal(t, tt.instances, got)
		})
	}

	t.Run("GPUs from dcgm-exporter in both label layouts", func(t *testing.T) {
		const mib = 1 << 20
		require.Len(t, srv.Query(t, `DCGM_FI_DEV_GPU_UTIL{job="nvidia-dcgm-exporter", namespace="gpu-operator", exported_namespace="llmd"}`), 3,
			"honor_labels false renames the workload's labels to exported_*")
		require.Len(t, srv.Query(t, `DCGM_FI_DEV_GPU_UTIL{namespace="kserve", exported_namespace=""}`), 3, "honor_labels true keeps them")
		for _, tt := range []struct {
			ds          backend.DataSourceInstanceSettings
			node        string
			instances   []string
			hot, second string
		}{
			{ds("llmd", "llm-d", "llmd"), "gpu-node-a7", []string{"llmd/vllm-0", "llmd/vllm-0", "llmd/vllm-1"}, "llmd/vllm-0", "llmd/vllm-1"},
			{ds("ks", "kserve", "kserve"), "gpu-node-b2", []string{"kserve/vllm-0", "kserve/vllm-0", "kserve/vllm-1"}, "kserve/vllm-0", "kserve/vllm-1"},
		} {
			resp := host.QueryData(t, tt.ds, nil,
				at("G", `{"queryType":"gpu","source":"dcgm"}`),
				at("S", `{"queryType":"gpu","source":"dcgm","format":"series"}`),
				at("K", `{"queryType":"topk","k":2,"rankBy":"waiting","format":"table"}`))
			for ref, r := range resp.Responses {
				require.NoError(t, r.Error, ref)
			}
			g := resp.Responses["G"].Frames[0]
			require.Equal(t, 3, g.Rows(), "the namespace's three GPUs, through either layout")
			col := columns(g)
			for i := 0; i < 3; i++ {
				require.Equal(t, tt.node, col["node"].At(i), "Hostname or hostname")
				require.Equal(t, tt.instances[i], col["vllm instance"].At(i))
				require.Equal(t, "Qwen/Qwen2.5-7B-Instruct", col["model"].At(i))
				require.Equal(t, 81559.0*mib, num(col["memory total"].At(i)), "total = used + free + reserved")
				require.Equal(t, 1980e6, num(col["sm clock"].At(i)))
			}
			require.Equal(t, 74113.0*mib, num(col["memory used"].At(0)))
			require.Equal(t, 79.0, num(col["last xid"].At(2)))
			require.InDelta(t, 0.412, num(col["tensor active"].At(0)), 1e-9)

			require.NotEmpty(t, seriesNames(resp.Responses["S"].Frames, " memory_total"))

			k := columns(resp.Responses["K"].Frames[0])
			require.NotNil(t, k["gpus"], "top-k takes GPU columns from dcgm-exporter when no agents answer")
			for i := 0; i < 2; i++ {
				want := map[string]float64{tt.hot: 2, tt.second: 1}[k["instance"].At(i).(string)]
				require.Equal(t, want, num(k["gpus"].At(i)), "tensor-parallel pods sum their GPUs")
			}
		}

		// Without a scope every GPU shows, the unallocated ones without a vLLM server.
		all := backend.DataSourceInstanceSettings{UID: "all-gpus", URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s","profile":"llm-d"}`)}
		resp := host.QueryData(t, all, nil, at("G", `{"queryType":"gpu","source":"dcgm"}`),
			at("F", `{"queryType":"gpu","source":"dcgm","instances":["kserve/vllm-0"]}`))
		g := columns(resp.Responses["G"].Frames[0])
		require.Equal(t, 8, g["node"].Len())
		var free []string
		for i := 0; i < g["node"].Len(); i++ {
			if g["vllm instance"].At(i) == "" {
				free = append(free, g["node"].At(i).(string)+"/"+g["gpu"].At(i).(string))
			}
		}
		require.Equal(t, []string{"gpu-node-a7/3", "gpu-node-b2/3"}, free)
		require.Equal(t, 2, resp.Responses["F"].Frames[0].Rows())
	})

	t.Run("the endpoint picker's view beside the engines' queue", func(t *testing.T) {
		resp := host.QueryData(t, ds("llmd", "llm-d", "llmd"), nil, at("Q", `{"queryType":"queue","grouping":"instance"}`))
		require.NoError(t, resp.Responses["Q"].Error)
		fs := resp.Responses["Q"].Frames
		require.ElementsMatch(t, []string{"llmd/vllm-0 picker_waiting", "llmd/vllm-1 picker_waiting"}, seriesNames(fs, " picker_waiting"),
			"both name sets (inference_pool_per_pod_queue_size, llm_d_epp_per_endpoint_queue_size) count once per endpoint")
		for name, want := range map[string]float64{"llmd pool_waiting": 2, "llmd pool_kv_usage": 0.4, "llmd ready_endpoints": 2, "llmd/vllm-1 picker_waiting": 40} {
			f := frameNamed(t, fs, name)
			require.Equal(t, want, lastValue(t, f), name)
		}
		require.Equal(t, "percentunit", frameNamed(t, fs, "llmd pool_kv_usage").Fields[1].Config.Unit)
		var texts []string
		for _, n := range fs[0].Meta.Notices {
			texts = append(texts, n.Text)
		}
		require.Contains(t, strings.Join(texts, "\n"), "The endpoint picker's queue for llmd/vllm-1 (40) disagrees with the engine's own")

		none := host.QueryData(t, ds("ks", "kserve", "kserve"), nil, at("Q", `{"queryType":"queue","grouping":"instance"}`))
		require.NoError(t, none.Responses["Q"].Error)
		require.Empty(t, seriesNames(none.Responses["Q"].Frames, "_waiting"), "no picker scraped: nothing more shown")
		require.Len(t, seriesNames(none.Responses["Q"].Frames, " waiting"), 2)
	})

	t.Run("an older server without the engine label", func(t *testing.T) {
		resp := host.QueryData(t, ds("ks", "kserve", "kserve"), nil, at("Q", `{"queryType":"queue","grouping":"instance_engine"}`))
		require.NoError(t, resp.Responses["Q"].Error)
		require.ElementsMatch(t, []string{"kserve/vllm-0/0 running", "kserve/vllm-0/1 running", "kserve/vllm-1 running"},
			seriesNames(resp.Responses["Q"].Frames, " running"))
	})

	t.Run("pod names repeat across namespaces", func(t *testing.T) {
		js := `{"scrapeInterval":"1s","profile":"llm-d","selector":"namespace=~\"llmd|kserve\""}`
		d := backend.DataSourceInstanceSettings{UID: "two", URL: srv.URL, JSONData: []byte(js)}
		r := host.CallResource(t, d, "GET", "instances", nil)
		require.JSONEq(t, `["kserve/vllm-0","kserve/vllm-1","llmd/vllm-0","llmd/vllm-1"]`, string(r.Body))
		resp := host.QueryData(t, d, nil,
			at("Q", `{"queryType":"queue","grouping":"instance","instances":["kserve/vllm-0"]}`),
			at("A", `{"queryType":"queue","grouping":"instance"}`))
		require.NoError(t, resp.Responses["Q"].Error)
		require.Equal(t, []string{"kserve/vllm-0 running"}, seriesNames(resp.Responses["Q"].Frames, " running"))
		require.Len(t, seriesNames(resp.Responses["A"].Frames, " running"), 4)

		// The diagnosis tables name servers by namespace/pod too: two
		// vllm-0 pods in two namespaces are two rows, never one.
		diag := host.QueryData(t, d, nil,
			at("F", `{"queryType":"fleet"}`),
			at("S", `{"queryType":"saturation","grouping":"instance","format":"table"}`))
		for _, ref := range []string{"F", "S"} {
			r := diag.Responses[ref]
			require.NoError(t, r.Error, ref)
			col := columns(r.Frames[0])["instance"]
			require.NotNil(t, col, "%s has an instance column", ref)
			seen := map[string]bool{}
			for i := 0; i < col.Len(); i++ {
				seen[col.At(i).(string)] = true
			}
			require.Equal(t, map[string]bool{"kserve/vllm-0": true, "kserve/vllm-1": true, "llmd/vllm-0": true, "llmd/vllm-1": true}, seen, ref)
		}
		for path, want := range map[string]string{
			"engines?instance=kserve/vllm-0":           `["0","1"]`,
			"engines?instance=kserve/vllm-1":           `[]`, // an older server: no engine label
			"models?instance=llmd/vllm-1":              `["Qwen/Qwen2.5-7B-Instruct"]`,
			"instances?model=Qwen/Qwen2.5-7B-Instruct": `["kserve/vllm-0","kserve/vllm-1","llmd/vllm-0","llmd/vllm-1"]`,
		} {
			r := host.CallResource(t, d, "GET", path, nil)
			require.JSONEq(t, want, string(r.Body), path)
		}
	})

	t.Run("health suggests the profile that fits", func(t *testing.T) {
		for _, tt := range []struct{ profile, namespace, want string }{
			{"llm-d", "pstack", "The profile is llm-d, which does not fit: set profile production-stack"},
			{"prometheus", "kserve", "The profile is prometheus, which does not fit: set profile kserve"},
			{"kserve", "ray", "set profile ray-serve"},
		} {
			res := host.CheckHealth(t, ds("wrong-"+tt.namespace, tt.profile, tt.namespace))
			require.Contains(t, res.Message, tt.want, res.Message)
		}
		// Under the plain profile a production-stack namespace counts the
		// router's series as a server: the health message says why not to.
		res := host.CheckHealth(t, ds("plain-ps", "prometheus", "pstack"))
		require.Contains(t, res.Message, "set profile production-stack")
	})
}

// dcgmJob scrapes a dcgm-exporter fixture as the GPU operator's
// ServiceMonitor does (job from the Service, the exporter pod's own
// namespace/pod/container as target labels), with honor_labels as given:
// false renames the exporter's workload labels to exported_*.
func dcgmJob(name string, honor bool, addr, pod string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - job_name: %s\n    honor_labels: %t\n    relabel_configs:\n%s", name, honor, operatorRelabel)
	fmt.Fprintf(&b, "    static_configs:\n      - targets: [%q]\n        labels:\n", addr)
	for _, kv := range [][2]string{{"__meta_kubernetes_namespace", "gpu-operator"}, {"__meta_kubernetes_pod_name", pod},
		{"__meta_kubernetes_pod_container_name", "nvidia-dcgm-exporter"}, {"__meta_kubernetes_pod_container_port_name", "gpu-metrics"},
		{"__meta_kubernetes_service_name", "nvidia-dcgm-exporter"}} {
		fmt.Fprintf(&b, "          %s: %q\n", kv[0], kv[1])
	}
	return b.String()
}

func suffixed(names []string, suffix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + suffix
	}
	sort.Strings(out)
	return out
}

// num reads a nullable numeric cell.
func num(v any) float64 {
	switch p := v.(type) {
	case *float64:
		if p != nil {
			return *p
		}
	case *int64:
		if p != nil {
			return float64(*p)
		}
	}
	return -1
}

// columns indexes a frame's fields by name.
func columns(f *data.Frame) map[string]*data.Field {
	out := map[string]*data.Field{}
	for _, fd := range f.Fields {
		out[fd.Name] = fd
	}
	return out
}

// frameNamed is the frame with the name.
func frameNamed(t *testing.T, fs []*data.Frame, name string) *data.Frame {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	require.FailNow(t, "no frame "+name)
	return nil
}

// runningFrame is the "running" series of a queue query grouped by nothing.
func runningFrame(t *testing.T, fs []*data.Frame) *data.Frame {
	t.Helper()
	for _, f := range fs {
		if strings.TrimSpace(f.Name) == "running" {
			return f
		}
	}
	require.FailNow(t, "no running series")
	return nil
}
