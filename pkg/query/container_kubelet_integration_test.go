//go:build !mutation

package query_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// serveRates serves an exposition whose _total values are per-second
// rates: each scrape multiplies them by the seconds since the server
// started, so rate() over the scrapes reads the fixture's number back.
func serveRates(t *testing.T, body []byte) string {
	t.Helper()
	start := time.Now().Add(-time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elapsed := time.Since(start).Seconds()
		w.Header().Set("Content-Type", promtest.ContentType)
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
				if name, _, _ := strings.Cut(line, "{"); strings.HasSuffix(name, "_total") {
					v, err := strconv.ParseFloat(line[i+1:], 64)
					if err == nil {
						line = fmt.Sprintf("%s %g", line[:i], v*elapsed)
					}
				}
			}
			fmt.Fprintln(w, line)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// vllmPod is one vLLM server's exposition with the labels
// prometheus-operator's monitors give its target (namespace, pod,
// container).
func vllmPod(pod string) []byte {
	return []byte(fmt.Sprintf(`vllm:num_requests_running{container="vllm",engine="0",model_name="m",namespace="inference",pod=%q} 1
vllm:num_requests_waiting{container="vllm",engine="0",model_name="m",namespace="inference",pod=%q} 0
`, pod, pod))
}

// TestContainerKubeletShape scrapes the kubelet-shaped fixture
// (testdata/cadvisor/kubelet.prom: pod rows, containerd's and docker's
// pause rows, a sidecar, a QoS parent, another namespace's pod) with the
// real Prometheus and reads the container query: each vLLM container's
// own numbers, never the pod row or the pause row added on top, and not
// the sidecar (the join is on namespace, pod and container, and the vLLM
// series' container label is vllm's); limits
// where set and "no limit" where not; network once per pod.
func TestContainerKubeletShape(t *testing.T) {
	t.Parallel()
	kubelet, err := os.ReadFile("testdata/cadvisor/kubelet.prom")
	require.NoError(t, err)
	cad := serveRates(t, kubelet)
	p0, p1 := promtest.ServeExposition(t, vllmPod("vllm-0")), promtest.ServeExposition(t, vllmPod("vllm-1"))
	prom := promtest.Start(t, promtest.Options{Targets: []string{p0, p1},
		ExtraJobs: fmt.Sprintf("  - job_name: kubelet\n    honor_labels: true\n    metrics_path: /metrics\n    static_configs:\n      - targets: [%q]\n", cad)})
	prom.WaitForSeries(t, `count_over_time(container_cpu_usage_seconds_total{pod="vllm-0",container="vllm"}[1m]) >= 8`, 1, 90*time.Second)
	prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 8`, 2, 60*time.Second)
	e := settingsExecutor(t, prom.URL, `{"scrapeInterval":"1s","profile":"production-stack"}`)
	to := time.Now()

	r := run(t, e, dq("C", `{"queryType":"container"}`, to.Add(-20*time.Second), to)).Responses["C"]
	require.NoError(t, r.Error)
	fr := byName(r.Frames)
	last := func(name string) float64 {
		f := fr[name]
		require.NotNil(t, f, "no frame %q; frames: %v", name, keys(fr))
		_, v := lastPoint(f)
		return v
	}
	tests := []struct {
		frame string
		want  float64
		why   string
	}{
		{"inference/vllm-0/vllm cpu_used", 2, "the vllm container alone: not the pod row (2.501) nor pod + pause + containers (5.003)"},
		{"inference/vllm-0/vllm cpu_limit", 2, "quota 200000 / period 100000"},
		{"inference/vllm-0/vllm cpu_of_limit", 1, "2 cores of 2"},
		{"inference/vllm-0/vllm cpu_throttled", 0.3, "3 of 10 periods"},
		{"inference/vllm-0/vllm memory_used", 2.8e10, "the container's working set, not the pod's 2.9e10"},
		{"inference/vllm-0/vllm memory_limit", 32 << 30, "32 GiB"},
		{"inference/vllm-0/vllm memory_of_limit", 2.8e10 / (32 << 30), ""},
		{"inference/vllm-1/vllm cpu_used", 1, "docker's POD row left out"},
		{"inference/vllm-1/vllm memory_used", 2e10, ""},
		{"inference/vllm-0 network_receive", 1e6, "the pod's network once, though both pod and pause rows report it"},
		{"inference/vllm-0 network_transmit", 2e6, ""},
		{"inference/vllm-1 network_receive", 5e5, "on docker's POD row only"},
		{"inference/vllm-0/vllm fs_read", 3e6, ""},
		{"inference/vllm-0/vllm restarts", 0, "kube-state-metrics"},
	}
	for _, tt := range tests {
		require.InEpsilon(t, tt.want+1e-12, last(tt.frame)+1e-12, 0.02, "%s: %s", tt.frame, tt.why)
	}
	for _, absent := range []string{"inference/vllm-1/vllm cpu_limit", "inference/vllm-1/vllm cpu_of_limit", "inference/vllm-1/vllm memory_limit",
		"inference/vllm-1/vllm memory_of_limit", "inference/vllm-0/proxy cpu_used", "inference/vllm-0/ cpu_used", "other/web-0/web cpu_used"} {
		require.Nil(t, fr[absent], "%s: no limit, a sidecar, a pod row or not a vLLM server: no series; frames %v", absent, keys(fr))
	}
	for name := range fr {
		require.NotContains(t, name, "/POD", "a pause row became a container")
	}
	notes := noticeTexts(r.Frames)
	require.Contains(t, notes, "CPU: no limit (no CPU share of limit or throttling is shown for them): inference/vllm-1/vllm")
	require.Contains(t, notes, "memory: no limit")
	require.Equal(t, "suffix: cores", fr["inference/vllm-0/vllm cpu_used"].Fields[1].Config.Unit)

	t.Run("table", func(t *testing.T) {
		r := run(t, e, dq("T", `{"queryType":"container","format":"table"}`, to.Add(-20*time.Second), to)).Responses["T"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 1)
		f := r.Frames[0]
		require.Equal(t, 2, f.Rows(), "each server's vllm container")
		col := func(title string) *data.Field {
			fl, _ := f.FieldByName(title)
			require.NotNil(t, fl, title)
			return fl
		}
		require.Equal(t, []string{"inference/vllm-0", "inference/vllm-1"}, []string{f.Fields[0].At(0).(string), f.Fields[0].At(1).(string)})
		require.Equal(t, "vllm", f.Fields[1].At(0))
		require.Nil(t, col("CPU limit").At(1), "vllm-1 has no CPU limit")
		require.Equal(t, "no limit", col("CPU limit").Config.NoValue)
		require.InDelta(t, 0.3, *col("CPU throttled %").At(0).(*float64), 0.01)
		require.InEpsilon(t, 1e6, *col("network in").At(0).(*float64), 0.02, "the pod's network on its row")
		require.Nil(t, col("memory % of limit").At(1))
	})
	t.Run("fleet columns: the server's vllm container", func(t *testing.T) {
		r := run(t, e, dq("F", `{"queryType":"fleet"}`, to.Add(-20*time.Second), to)).Responses["F"]
		require.NoError(t, r.Error)
		f := r.Frames[0]
		thr, _ := f.FieldByName("CPU throttled %")
		mem, _ := f.FieldByName("memory % of limit")
		require.NotNil(t, thr, "cAdvisor series exist: the column is there")
		require.NotNil(t, mem)
		require.Equal(t, "no limit", mem.Config.NoValue)
		inst, _ := f.FieldByName("instance")
		got := map[string][2]*float64{}
		for i := 0; i < f.Rows(); i++ {
			got[inst.At(i).(string)] = [2]*float64{thr.At(i).(*float64), mem.At(i).(*float64)}
		}
		require.InDelta(t, 0.3, *got["inference/vllm-0"][0], 0.01)
		require.InDelta(t, 2.8e10/(32<<30), *got["inference/vllm-0"][1], 1e-3)
		require.Nil(t, got["inference/vllm-1"][0], "no quota: no throttling")
		require.Nil(t, got["inference/vllm-1"][1], "no memory limit: no share")
	})
	t.Run("servers named by instance (no pod identity) join the same containers", func(t *testing.T) {
		e := settingsExecutor(t, prom.URL, `{"scrapeInterval":"1s"}`)
		r := run(t, e, dq("I", `{"queryType":"container"}`, to.Add(-20*time.Second), to)).Responses["I"]
		require.NoError(t, r.Error)
		fr := byName(r.Frames)
		f := fr[p0+"/vllm cpu_throttled"]
		require.NotNil(t, f, "frames: %v", keys(fr))
		_, v := lastPoint(f)
		require.InDelta(t, 0.3, v, 0.01, "the ratio joined on namespace, pod and container though the server's identity is its instance")
		_, mem := lastPoint(fr[p0+"/vllm memory_of_limit"])
		require.InDelta(t, 2.8e10/(32<<30), mem, 1e-3)
	})
	t.Run("kube-prometheus-stack drops container_spec_*: limits from kube-state-metrics", func(t *testing.T) {
		// The chart's default kubelet.serviceMonitor.cAdvisorMetricRelabelings
		// (prometheus-community/helm-charts, charts/kube-prometheus-stack/values.yaml):
		// "Drop container spec metrics that overlap with kube-state-metrics" and
		// "Drop cgroup metrics with no pod".
		relabel := "    metric_relabel_configs:\n" +
			"      - {source_labels: [__name__], action: drop, regex: 'container_spec.*'}\n" +
			"      - {source_labels: [id, pod], action: drop, regex: '.+;'}\n"
		stack := promtest.Start(t, promtest.Options{Targets: []string{p0, p1},
			ExtraJobs: fmt.Sprintf("  - job_name: kubelet\n    honor_labels: true\n%s    static_configs:\n      - targets: [%q]\n", relabel, cad)})
		stack.WaitForSeries(t, `count_over_time(container_cpu_usage_seconds_total{pod="vllm-0",container="vllm"}[1m]) >= 8`, 1, 90*time.Second)
		stack.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 8`, 2, 60*time.Second)
		stack.WaitForSeries(t, `absent(container_spec_cpu_quota)`, 1, 10*time.Second)
		e := settingsExecutor(t, stack.URL, `{"scrapeInterval":"1s","profile":"production-stack"}`)
		now := time.Now()
		r := run(t, e, dq("K", `{"queryType":"container"}`, now.Add(-20*time.Second), now)).Responses["K"]
		require.NoError(t, r.Error)
		fr := byName(r.Frames)
		for name, want := range map[string]float64{"inference/vllm-0/vllm cpu_limit": 2, "inference/vllm-0/vllm cpu_of_limit": 1,
			"inference/vllm-0/vllm memory_limit": 32 << 30, "inference/vllm-0/vllm memory_of_limit": 2.8e10 / (32 << 30),
			"inference/vllm-0/vllm cpu_throttled": 0.3} {
			f := fr[name]
			require.NotNil(t, f, "%s; frames: %v", name, keys(fr))
			_, v := lastPoint(f)
			require.InEpsilon(t, want, v, 0.02, name)
		}
		require.Nil(t, fr["inference/vllm-1/vllm cpu_limit"], "no limit in kube-state-metrics either")
		require.Contains(t, noticeTexts(r.Frames), "CPU: no limit (no CPU share of limit or throttling is shown for them): inference/vllm-1/vllm")
	})
	t.Run("legacy labels find nothing in a current kubelet's shape, and say so", func(t *testing.T) {
		e := settingsExecutor(t, prom.URL, `{"scrapeInterval":"1s","profile":"production-stack","containerLabels":"legacy"}`)
		r := run(t, e, dq("L", `{"queryType":"container"}`, to.Add(-20*time.Second), to)).Responses["L"]
		require.NoError(t, r.Error)
		require.Contains(t, noticeTexts(r.Frames), "none of its containers joins a selected vLLM server")
	})
	t.Run("no cAdvisor: a notice, no error", func(t *testing.T) {
		bare := promtest.Start(t, promtest.Options{Targets: []string{p0}})
		bare.WaitForSeries(t, `vllm:num_requests_running`, 1, 60*time.Second)
		e := settingsExecutor(t, bare.URL, `{"scrapeInterval":"1s","profile":"production-stack"}`)
		r := run(t, e, dq("N", `{"queryType":"container"}`, time.Now().Add(-10*time.Second), time.Now())).Responses["N"]
		require.NoError(t, r.Error)
		require.Contains(t, noticeTexts(r.Frames), "No cAdvisor is scraped")
	})
}
