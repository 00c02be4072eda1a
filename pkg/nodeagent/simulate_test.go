package nodeagent

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

func TestNewSimulatedValidates(t *testing.T) {
	tests := []struct {
		name    string
		cfg     SimConfig
		wantErr string
	}{
		{"zero GPUs", SimConfig{GPUs: 0}, "0 GPUs: want 1 to 1024"},
		{"too many", SimConfig{GPUs: 1025}, "1025 GPUs"},
		{"bad follow URL", SimConfig{GPUs: 1, Follow: []string{"vllm-sim:8000/metrics"}}, `follow URL "vllm-sim:8000/metrics"`},
		{"ok", SimConfig{GPUs: 8, Follow: []string{"http://vllm-sim:8000/metrics"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSimulated(tt.cfg)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestSimulatedUnfollowed(t *testing.T) {
	at := time.Unix(0, 0) // phase 0: GPU 0 runs 12 requests, KV 0.35+0.25·sin(-0.5)
	s, err := NewSimulated(SimConfig{GPUs: 2, Node: "sim-node", Host: "sim-node", Now: func() time.Time { return at }})
	require.NoError(t, err)
	gpus, err := s.GPUs(context.Background())
	require.NoError(t, err)
	require.Len(t, gpus, 2)
	used := math.Floor(81559*(0.2+0.7*(0.35+0.25*math.Sin(-0.5)))) * (1 << 20)
	require.Equal(t, agentapi.GPU{
		Index: 0, UUID: simUUID("sim-node", 0), Name: "NVIDIA H100 80GB HBM3",
		MemoryUsedBytes: agentapi.Float(used), MemoryTotalBytes: agentapi.Float(85520809984),
		GPUUtilPercent: agentapi.Float(78), MemUtilPercent: agentapi.Float(47), TemperatureC: agentapi.Float(65),
		PowerWatts: agentapi.Float(512), PowerLimitWatts: agentapi.Float(700),
		Processes:    []agentapi.Process{{PID: 10000, UsedMemoryBytes: agentapi.Float(used - 512<<20), VLLMInstance: "sim-node:8000", Model: "meta-llama/Llama-3.1-8B-Instruct"}},
		VLLMInstance: "sim-node:8000", Model: "meta-llama/Llama-3.1-8B-Instruct",
	}, gpus[0])
	require.Equal(t, "sim-node:8001", gpus[1].VLLMInstance)
	require.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, gpus[1].UUID)
	require.NotEqual(t, gpus[0].UUID, gpus[1].UUID)

	again, err := s.GPUs(context.Background())
	require.NoError(t, err)
	require.Equal(t, gpus, again, "same clock, same readings")
}

const v1Exposition = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="1",model_name="m/a"} 0
vllm:num_requests_running{engine="10",model_name="m/a"} 3
vllm:num_requests_running{engine="0",model_name="m/a"} 8
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m/a"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m/a"} 0
vllm:kv_cache_usage_perc{engine="10",model_name="m/a"} 1
`

const v0Exposition = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m/b"} 40
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m/b"} 0.25
`

func TestParseEngineLoads(t *testing.T) {
	tests := []struct {
		name, text string
		want       []engineLoad
		wantErr    string
	}{
		{"v1 ordered numerically", v1Exposition, []engineLoad{{"0", 8, 0.5, "m/a"}, {"1", 0, 0, "m/a"}, {"10", 3, 1, "m/a"}}, ""},
		{"v0 without engine label", v0Exposition, []engineLoad{{"", 40, 0.25, "m/b"}}, ""},
		{"not vllm", "# TYPE up gauge\nup 1\n", nil, "not a vLLM exposition"},
		{"garbage", "vllm:num_requests_running{", nil, "parsing metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEngineLoads(stringsReader(tt.text))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// switchable serves text until broken is set, then 500s.
type switchable struct {
	text   string
	broken atomic.Bool
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if s.broken.Load() {
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(s.text))
}

func TestSimulatedFollow(t *testing.T) {
	a := &switchable{text: v1Exposition}
	srvA := httptest.NewServer(a)
	defer srvA.Close()
	srvB := httptest.NewServer(&switchable{text: v0Exposition})
	defer srvB.Close()
	hostA, hostB := mustHost(t, srvA.URL), mustHost(t, srvB.URL)

	s, err := NewSimulated(SimConfig{GPUs: 5, Node: "n", Host: "n", Follow: []string{srvA.URL + "/metrics", srvB.URL + "/metrics"}})
	require.NoError(t, err)
	gpus, err := s.GPUs(context.Background())
	require.NoError(t, err)
	type row struct {
		inst, model   string
		util, usedMiB float64
		err           string
	}
	summary := func(gpus []agentapi.GPU) []row {
		out := make([]row, len(gpus))
		for i, g := range gpus {
			out[i] = row{g.VLLMInstance, g.Model, *g.GPUUtilPercent, *g.MemoryUsedBytes / (1 << 20), g.Error}
		}
		return out
	}
	require.Equal(t, []row{
		{hostA, "m/a", 63, math.Floor(81559 * (0.2 + 0.7*0.5)), ""}, // 8 running: 1-e^-1
		{hostA, "m/a", 0, math.Floor(81559 * 0.2), ""},
		{hostA, "m/a", 31, math.Floor(81559 * 0.9), ""},
		{hostB, "m/b", 99, math.Floor(81559 * (0.2 + 0.7*0.25)), ""},
		{"", "", 0, 512, ""}, // no fifth engine: idle and unmapped
	}, summary(gpus))
	require.Empty(t, gpus[4].Processes)

	a.broken.Store(true)
	gpus, err = s.GPUs(context.Background())
	require.NoError(t, err)
	errA := "follow " + srvA.URL + "/metrics: HTTP 500"
	require.Equal(t, []row{
		{hostA, "m/a", 0, math.Floor(81559 * 0.2), errA}, // engines stay in place, idle, with the error
		{hostA, "m/a", 0, math.Floor(81559 * 0.2), errA},
		{hostA, "m/a", 0, math.Floor(81559 * 0.2), errA},
		{hostB, "m/b", 99, math.Floor(81559 * (0.2 + 0.7*0.25)), ""},
		{"", "", 0, 512, ""},
	}, summary(gpus))
}

// TestSimulatedFollowsVLLMSim follows a real simulated fleet (pkg/sim): two
// V1 engines of one instance and a V0 instance.
func TestSimulatedFollowsVLLMSim(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Rate = 20
	cfg.Instances = []sim.InstanceConfig{{Model: "m/v1", Engines: 2}, {Model: "m/v0", Generation: sim.V0}}
	fleet, err := sim.NewFleet(cfg)
	require.NoError(t, err)
	require.NoError(t, fleet.Advance(30*time.Second))
	var urls []string
	for i := range cfg.Instances {
		srv := httptest.NewServer(fleet.Handler(i))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/metrics")
	}
	s, err := NewSimulated(SimConfig{GPUs: 3, Node: "n", Host: "n", Follow: urls})
	require.NoError(t, err)
	gpus, err := s.GPUs(context.Background())
	require.NoError(t, err)
	snap := fleet.Snapshot()
	require.Len(t, snap.Engines, 3)
	busy := false
	for i, e := range snap.Engines {
		g := gpus[i]
		require.Empty(t, g.Error)
		require.Equal(t, mustHost(t, urls[e.Instance]), g.VLLMInstance)
		require.Equal(t, e.Model, g.Model)
		wantUtil := 0.0
		if e.Running > 0 {
			wantUtil = math.Round(100 * (1 - math.Exp(-float64(e.Running)/8)))
		}
		busy = busy || e.Running > 0
		require.Equal(t, wantUtil, *g.GPUUtilPercent, "GPU %d follows engine %d/%d (%d running)", i, e.Instance, e.Engine, e.Running)
		kv := float64(e.KVBlocksUsed) / float64(e.KVBlocksTotal)
		require.InDelta(t, 81559*(0.2+0.7*kv), *g.MemoryUsedBytes/(1<<20), 1)
	}
	require.True(t, busy, "the fleet should be running requests")
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
