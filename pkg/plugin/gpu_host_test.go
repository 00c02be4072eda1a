package plugin_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
)

// startAgent runs the real vllm-node-agent binary with simulated GPUs that
// follow one simulated vLLM instance, and waits until it answers.
// follow is a comma-separated list of /metrics URLs; extra flags come last,
// so an extra --simulate overrides the default of two GPUs.
func startAgent(t *testing.T, bin, node, follow string, extra ...string) (string, *exec.Cmd) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	args := append([]string{"--simulate", "2", "--listen", addr, "--node-name", node, "--follow", follow}, extra...)
	cmd := exec.Command(bin, args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			_ = resp.Body.Close()
			return "http://" + addr, cmd
		}
	}
	t.Fatalf("node agent %s did not start", addr)
	return "", nil
}

// TestHostGPU runs real node agents in simulate mode beside a simulated
// fleet — one agent killed, one slower than the timeout — and calls the gpu
// query type and the GPU-joined top-k table over gRPC.
func TestHostGPU(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	bin := filepath.Join(t.TempDir(), "vllm-node-agent")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vllm-node-agent")
	build.Dir = grafanahost.RepoRoot(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	env := fleettest.Start(t, fleettest.HotFleet(9))
	var urls []string
	for i, ep := range env.Endpoints {
		var extra []string
		if i == 3 {
			extra = []string{"--sim-delay", "12s"}
		}
		u, cmd := startAgent(t, bin, fmt.Sprintf("node-%d", i), "http://"+ep.Addr+"/metrics", extra...)
		if i == 2 {
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
		}
		urls = append(urls, u)
	}
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 8`, 8, 60*time.Second)
	js, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "agentUrls": urls, "agentTimeout": "2s"}) // live agents answer in ms, but a loaded CI machine stalled them past 700ms
	require.NoError(t, err)
	ds := backend.DataSourceInstanceSettings{UID: "gpu", URL: env.Prom.URL, JSONData: js,
		DecryptedSecureJSONData: map[string]string{"agentToken": "s3cret-token"}}
	now := time.Now()
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 200,
			TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}}
	}
	start := time.Now()
	resp := host.QueryData(t, ds, nil,
		q("T", `{"queryType":"gpu"}`),
		q("S", `{"queryType":"gpu","format":"series","instances":["`+env.Endpoints[0].Addr+`"]}`),
		q("K", `{"queryType":"topk","k":2,"rankBy":"waiting"}`),
	)
	require.Less(t, time.Since(start), 8*time.Second, "the slow agent (12 s) is cut off at its timeout (2 s)")

	table := resp.Responses["T"]
	require.NoError(t, table.Error)
	f := table.Frames[0]
	require.Equal(t, 4, f.Rows(), "two live agents with two GPUs each")
	notices := noticeText(f)
	require.Contains(t, notices, strings.TrimPrefix(urls[2], "http://"), "the killed agent is named")
	require.Contains(t, notices, strings.TrimPrefix(urls[3], "http://"), "the slow agent is named")
	require.NotContains(t, notices, "s3cret-token")

	series := resp.Responses["S"]
	require.NoError(t, series.Error)
	for _, fr := range series.Frames {
		require.Equal(t, env.Endpoints[0].Addr, fr.Fields[1].Labels["vllm_instance"])
	}

	k := resp.Responses["K"]
	require.NoError(t, k.Error)
	tbl := k.Frames[len(k.Frames)-1]
	require.Equal(t, env.Endpoints[0].Addr, tbl.Fields[1].At(0), "the hot instance ranks first")
	_, gpusIdx := tbl.FieldByName("gpus")
	require.GreaterOrEqual(t, gpusIdx, 0, "GPU columns joined to the ranked instances")
	gpus := tbl.Fields[gpusIdx].At(0).(*int64)
	require.NotNil(t, gpus)
	require.Equal(t, int64(2), *gpus)
	_, memIdx := tbl.FieldByName("gpu memory used")
	require.Greater(t, *tbl.Fields[memIdx].At(0).(*float64), 0.0)

	t.Run("from Prometheus scraping the agents", func(t *testing.T) {
		targets := []string{strings.TrimPrefix(urls[0], "http://"), strings.TrimPrefix(urls[1], "http://")}
		srv := promtest.Start(t, promtest.Options{Targets: targets})
		// The agents map GPUs once they have read the fleet; wait for the mapped series.
		srv.WaitForSeries(t, `count_over_time(vllm_node_gpu_utilization_ratio{vllm_instance="`+env.Endpoints[0].Addr+`"}[1m]) >= 3`, 2, 60*time.Second)
		pds := backend.DataSourceInstanceSettings{UID: "gpu-prom", URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
		now := time.Now()
		r := host.QueryData(t, pds, nil, backend.DataQuery{RefID: "P", Interval: time.Second, MaxDataPoints: 100,
			JSON:      json.RawMessage(`{"queryType":"gpu","source":"prometheus","instances":["` + env.Endpoints[0].Addr + `"]}`),
			TimeRange: backend.TimeRange{From: now.Add(-30 * time.Second), To: now}}).Responses["P"]
		require.NoError(t, r.Error)
		require.Positive(t, finiteValues(r.Frames), "frames: %d, query: %s", len(r.Frames), r.Frames[0].Meta.ExecutedQueryString)
		signals := map[string]bool{}
		for _, fr := range r.Frames {
			require.Equal(t, env.Endpoints[0].Addr, fr.Fields[1].Labels["vllm_instance"])
			signals[fr.Fields[1].Labels["signal"]] = true
		}
		require.True(t, signals["utilization_ratio"] && signals["memory_used_bytes"], "signals: %v", signals)
	})
}

func noticeText(f *data.Frame) string {
	var b strings.Builder
	if f.Meta != nil {
		for _, n := range f.Meta.Notices {
			b.WriteString(n.Text + "\n")
		}
	}
	return b.String()
}
