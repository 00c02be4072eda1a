package plugin_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// frozenFleet runs the standard hot fleet for two simulated minutes in
// virtual time and serves each instance's exposition as it stands then,
// unchanged: a store that scrapes it directly and one fed over OTLP hold
// the same values, so their frames can be compared exactly.
func frozenFleet(t *testing.T) []string {
	t.Helper()
	f, err := sim.NewFleet(fleettest.HotFleet(39))
	require.NoError(t, err)
	require.NoError(t, f.Advance(2*time.Minute))
	var addrs []string
	for i := range f.Config().Instances {
		var buf bytes.Buffer
		require.NoError(t, f.WriteMetrics(&buf, i))
		addrs = append(addrs, promtest.ServeExposition(t, buf.Bytes()))
	}
	return addrs
}

// podGroups gives each server a pod in namespace inference, except the
// last, in batch: the target labels a Kubernetes scrape would add.
func podGroups(addrs []string) []promtest.Group {
	var gs []promtest.Group
	for i, a := range addrs {
		ns := "inference"
		if i == len(addrs)-1 {
			ns = "batch"
		}
		gs = append(gs, promtest.Group{Targets: []string{a}, Labels: map[string]string{"namespace": ns, "pod": fmt.Sprintf("vllm-%d", i)}})
	}
	return gs
}

// otlpStore is Prometheus 3 with its OTLP receiver under one translation
// strategy, fed by a real OpenTelemetry Collector that scrapes the fleet
// and moves namespace and pod to the resource (k8s.namespace.name,
// k8s.pod.name), so the store keeps them on target_info only, unless it
// promotes them.
func otlpStore(t *testing.T, groups []promtest.Group, strategy string, promote, trim bool) *promtest.Server {
	t.Helper()
	cfg := "  translation_strategy: " + strategy + "\n"
	if promote {
		cfg += "  promote_resource_attributes: [k8s.namespace.name, k8s.pod.name]\n"
	}
	srv := promtest.Start(t, promtest.Options{Backend: promtest.Prometheus3, Args: []string{"--web.enable-otlp-receiver"}, OTLP: cfg})
	promtest.StartCollector(t, promtest.Collector{Groups: groups, Prom: srv, ToResource: []string{"namespace", "pod"}, TrimSuffixes: trim})
	return srv
}

// measured are the fleet table's columns each store measures itself: how
// long its own scrape of the server took.
var measured = map[string]bool{"scrape s": true, "scrape % of timeout": true}

// comparable is a response's frames as JSON without what differs between
// two stores holding the same data: the executed PromQL and the scrape
// durations each scraper measured.
func comparable(t *testing.T, r backend.DataResponse) string {
	t.Helper()
	require.NoError(t, r.Error)
	var out []json.RawMessage
	for _, f := range r.Frames {
		c := *f
		c.Fields = nil
		for _, fl := range f.Fields {
			if !measured[fl.Name] {
				c.Fields = append(c.Fields, fl)
			}
		}
		if f.Meta != nil {
			m := *f.Meta
			m.ExecutedQueryString = ""
			c.Meta = &m
		}
		b, err := json.Marshal(&c)
		require.NoError(t, err)
		out = append(out, b)
	}
	b, err := json.MarshalIndent(out, "", " ")
	require.NoError(t, err)
	return string(b)
}

// TestHostOTLP sends one frozen pod-shaped fleet to Prometheus 3 twice:
// scraped directly, and through a real OpenTelemetry Collector into the
// OTLP receiver under two translation strategies, with and without
// promoted attributes. Through the plugin over gRPC, the fleet table and
// the queue answer the same frames on every path, scoping by a namespace
// that only target_info holds selects the right engines, and health
// names the translation.
func TestHostOTLP(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	addrs := frozenFleet(t)
	groups := podGroups(addrs)
	direct := promtest.Start(t, promtest.Options{Backend: promtest.Prometheus3, Groups: groups})
	stores := []struct {
		name, strategy, translation string
		promote, trim               bool
	}{
		{"underscore", "UnderscoreEscapingWithSuffixes", "translation: UnderscoreEscapingWithSuffixes", false, false},
		{"utf8", "NoUTF8EscapingWithSuffixes", "translation: NoUTF8EscapingWithSuffixes", false, false},
		{"promoted", "UnderscoreEscapingWithSuffixes", "translation: UnderscoreEscapingWithSuffixes", true, false},
		// The receiver trims _total and the store adds no suffix: counters
		// are stored as vllm:num_preemptions.
		{"untranslated", "NoTranslation", "translation: NoTranslation (counters without _total", false, true},
	}
	srvs := map[string]*promtest.Server{}
	for _, s := range stores {
		srvs[s.name] = otlpStore(t, groups, s.strategy, s.promote, s.trim)
	}
	// Bad shapes. restarted: a second Collector sends the first server
	// again under another pod name, as after a restart that changed it
	// (OTLP series get no staleness markers, so both target_info series
	// stay in the lookback). twoWays: a second Collector that does not trim
	// _total beside one that does, under NoTranslation: every counter is
	// stored under both spellings.
	restarted := otlpStore(t, groups, "UnderscoreEscapingWithSuffixes", false, false)
	moved := promtest.Group{Targets: groups[0].Targets, Labels: map[string]string{"namespace": "inference", "pod": "vllm-0-restarted"}}
	promtest.StartCollector(t, promtest.Collector{Groups: []promtest.Group{moved}, Prom: restarted, ToResource: []string{"namespace", "pod"}})
	twoWays := otlpStore(t, groups, "NoTranslation", false, true)
	promtest.StartCollector(t, promtest.Collector{Groups: groups, Prom: twoWays, ToResource: []string{"namespace", "pod"}})
	// bare: the targets carry no namespace or pod at all.
	bare := otlpStore(t, []promtest.Group{{Targets: addrs}}, "UnderscoreEscapingWithSuffixes", false, false)
	bare.WaitForSeries(t, `vllm:num_requests_running`, 8, 60*time.Second)
	restarted.WaitForSeries(t, `target_info`, 5, 60*time.Second)
	twoWays.WaitForSeries(t, `vllm:num_preemptions_total`, 8, 60*time.Second)
	twoWays.WaitForSeries(t, `vllm:num_preemptions`, 8, 60*time.Second)
	// 8 engines, 20 scrapes each; target_info for all 4 servers.
	direct.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 20`, 8, 90*time.Second)
	for _, s := range srvs {
		s.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 20`, 8, 90*time.Second)
		s.WaitForSeries(t, `target_info`, 4, 30*time.Second)
	}
	ds := func(uid string, srv *promtest.Server, sel string) backend.DataSourceInstanceSettings {
		js, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "profile": "llm-d", "selector": sel})
		require.NoError(t, err)
		// One uid per settings: the host keeps an instance per uid.
		return backend.DataSourceInstanceSettings{UID: uid + "-" + fmt.Sprint(len(sel)), URL: srv.URL, JSONData: js}
	}
	now := time.Now()
	tr := backend.TimeRange{From: now.Add(-15 * time.Second), To: now}
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 100, TimeRange: tr}
	}
	queries := []backend.DataQuery{
		q("F", `{"queryType":"fleet"}`),
		q("Q", `{"queryType":"queue","grouping":"instance"}`),
		q("E", `{"queryType":"queue","grouping":"instance_engine"}`),
	}
	for _, sel := range []string{"", `namespace="inference"`} {
		want := host.QueryData(t, ds("direct", direct, sel), nil, queries...)
		if sel == "" {
			require.Equal(t, 8, want.Responses["F"].Frames[0].Rows(), "the direct store's table has every engine")
			require.Len(t, seriesNames(want.Responses["Q"].Frames, " running"), 4)
			golden(t, filepath.Join("testdata", "otlp_fleet.golden.json"), comparable(t, want.Responses["F"]))
		}
		for _, s := range stores {
			t.Run(s.name+"/"+sel, func(t *testing.T) {
				got := host.QueryData(t, ds(s.name, srvs[s.name], sel), nil, queries...)
				for _, qq := range queries {
					require.Equal(t, comparable(t, want.Responses[qq.RefID]), comparable(t, got.Responses[qq.RefID]), qq.RefID)
				}
			})
		}
	}

	t.Run("scoping by a namespace only target_info holds", func(t *testing.T) {
		for name, srv := range srvs {
			resp := host.QueryData(t, ds(name, srv, `namespace="inference"`), nil, q("F", `{"queryType":"fleet"}`))
			require.NoError(t, resp.Responses["F"].Error)
			f := resp.Responses["F"].Frames[0]
			var servers []string
			for i := 0; i < f.Rows(); i++ {
				servers = append(servers, fmt.Sprint(deref(f.Fields[0].At(i)))+" "+fmt.Sprint(deref(f.Fields[1].At(i))))
			}
			require.ElementsMatch(t, []string{"inference/vllm-0 0", "inference/vllm-0 1", "inference/vllm-1 0", "inference/vllm-1 1",
				"inference/vllm-2 0", "inference/vllm-2 1"}, servers, name)
			if name != "promoted" {
				require.Contains(t, f.Meta.ExecutedQueryString, "target_info", name)
			} else {
				require.NotContains(t, f.Meta.ExecutedQueryString, "target_info", "promoted attributes are read directly")
			}
		}
	})

	t.Run("two target_info series for one instance: explained, never a wrong join", func(t *testing.T) {
		resp := host.QueryData(t, ds("restarted", restarted, ""), nil, queries...)
		for _, qq := range queries {
			err := resp.Responses[qq.RefID].Error
			require.Error(t, err, qq.RefID)
			require.ErrorContains(t, err, "many-to-many matching not allowed", "Prometheus' own error is kept")
			require.ErrorContains(t, err, "namespace, pod is read from target_info, and some job/instance has two target_info series")
		}
		res := host.CheckHealth(t, ds("restarted", restarted, ""))
		require.Equal(t, backend.HealthStatusError, res.Status)
		require.Contains(t, res.Message, "some job/instance has two target_info series")
	})

	t.Run("namespace and pod nowhere: servers named by instance, and said", func(t *testing.T) {
		resp := host.QueryData(t, ds("bare", bare, ""), nil, q("F", `{"queryType":"fleet"}`))
		require.NoError(t, resp.Responses["F"].Error)
		f := resp.Responses["F"].Frames[0]
		require.Equal(t, 8, f.Rows(), "%s\n%s", comparable(t, resp.Responses["F"]), f.Meta.ExecutedQueryString)
		var servers []string
		for i := 0; i < f.Rows(); i++ {
			servers = append(servers, fmt.Sprint(deref(f.Fields[0].At(i))))
		}
		require.ElementsMatch(t, append(append([]string(nil), addrs...), addrs...), servers)
		require.Contains(t, fmt.Sprint(f.Meta.Notices), "namespace, pod on neither the engines' series nor target_info")
		res := host.CheckHealth(t, ds("bare", bare, ""))
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "8 engines on 4 instances")
		require.Contains(t, res.Message, "servers are told apart by instance instead")
	})

	t.Run("counters spelled two ways: one answer, and a notice in health", func(t *testing.T) {
		want := host.QueryData(t, ds("direct", direct, ""), nil, queries...)
		got := host.QueryData(t, ds("twoWays", twoWays, ""), nil, queries...)
		for _, qq := range queries {
			require.Equal(t, comparable(t, want.Responses[qq.RefID]), comparable(t, got.Responses[qq.RefID]), qq.RefID)
		}
		res := host.CheckHealth(t, ds("twoWays", twoWays, ""))
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "counters spelled two ways (")
		require.Contains(t, res.Message, "num_preemptions_total")
	})

	t.Run("resource routes list what target_info holds", func(t *testing.T) {
		for _, s := range stores {
			all, scoped := ds(s.name, srvs[s.name], ""), ds(s.name, srvs[s.name], `namespace="inference"`)
			for _, tt := range []struct {
				ds         backend.DataSourceInstanceSettings
				path, want string
			}{
				{all, "instances", `["batch/vllm-3","inference/vllm-0","inference/vllm-1","inference/vllm-2"]`},
				{scoped, "instances", `["inference/vllm-0","inference/vllm-1","inference/vllm-2"]`},
				{all, "namespaces", `["batch","inference"]`},
				{scoped, "models", `["Qwen/Qwen2.5-7B-Instruct","meta-llama/Llama-3.1-8B-Instruct"]`},
			} {
				r := host.CallResource(t, tt.ds, "GET", tt.path, nil)
				require.Equal(t, 200, r.Status, "%s %s: %s", s.name, tt.path, r.Body)
				require.JSONEq(t, tt.want, string(r.Body), "%s %s", s.name, tt.path)
			}
		}
	})

	t.Run("health recognises the OTLP path and names the translation", func(t *testing.T) {
		for _, s := range stores {
			res := host.CheckHealth(t, ds(s.name, srvs[s.name], ""))
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, "8 engines on 4 instances", s.name)
			require.Contains(t, res.Message, "fed over OpenTelemetry", s.name)
			require.Contains(t, res.Message, s.translation, s.name)
			if !s.promote {
				require.Contains(t, res.Message, "labels joined from target_info", s.name)
			}
		}
		res := host.CheckHealth(t, ds("direct", direct, ""))
		require.NotContains(t, res.Message, "OpenTelemetry")
	})
}

// golden compares got with a file in testdata (-update rewrites it).
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got+"\n"), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to write %s", path)
	require.Equal(t, string(want), got+"\n")
}
