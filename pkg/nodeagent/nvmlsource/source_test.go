//go:build cgo

package nvmlsource

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/nodeagent"
	"github.com/inferops/vllm-datasource/pkg/nodeagent/internal/fakeproc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const gib = 1 << 30

// gpuSetup is what one mocked H200 reports.
type gpuSetup struct {
	usedGiB          uint64
	util, memUtil    uint32
	temp             uint32
	powerMW, limitMW uint32
	procs            []nvml.ProcessInfo
	// fail maps a reading (utilization, temperature, power, limit,
	// processes) to the NVML error it returns.
	fail map[string]nvml.Return
}

// node is the dgxh200 server of the tests: the vLLM servers of
// fakeproc.VLLMNode spread over its eight GPUs.
//
//	GPU 0, 1: tensor-parallel workers 2101, 2102 of :8001 (Llama)
//	GPU 2: engine core 3100 of :8002 (served as Qwen/Qwen2.5-7B-Instruct)
//	GPU 3: engine core 4100 of :8000 (Qwen/Qwen3-0.6B)
//	GPU 4: python3 train.py (not vLLM)
//	GPU 5: pid 6000, not in /proc, memory unknown, plus 3100 with 1 GiB
//	GPU 6: idle; power limit not supported
//	GPU 7: utilization, temperature and processes fail (degraded)
func node() []gpuSetup {
	p := func(pid uint32, gb uint64) nvml.ProcessInfo {
		return nvml.ProcessInfo{Pid: pid, UsedGpuMemory: gb * gib}
	}
	return []gpuSetup{
		{120, 97, 61, 71, 612_250, 700_000, []nvml.ProcessInfo{p(2101, 119)}, nil},
		{120, 95, 60, 69, 598_000, 700_000, []nvml.ProcessInfo{p(2102, 119)}, nil},
		{110, 40, 22, 55, 301_500, 700_000, []nvml.ProcessInfo{p(3100, 109)}, nil},
		{100, 12, 5, 41, 150_000, 700_000, []nvml.ProcessInfo{p(4100, 99)}, nil},
		{30, 88, 70, 66, 480_000, 700_000, []nvml.ProcessInfo{p(5000, 29)}, nil},
		{20, 5, 1, 35, 90_000, 700_000, []nvml.ProcessInfo{{Pid: 6000, UsedGpuMemory: valueNotAvailable}, p(3100, 1)}, nil},
		{0, 0, 0, 30, 75_000, 0, nil, map[string]nvml.Return{"limit": nvml.ERROR_NOT_SUPPORTED}},
		{1, 0, 0, 0, 80_000, 700_000, nil, map[string]nvml.Return{
			"utilization": nvml.ERROR_GPU_IS_LOST, "temperature": nvml.ERROR_UNKNOWN, "processes": nvml.ERROR_GPU_IS_LOST}},
	}
}

// mockNode builds the dgxh200 mock with fixed UUIDs and the readings of
// setups; the mock panics on any method not set here.
func mockNode(t *testing.T, setups []gpuSetup) *server.Server {
	t.Helper()
	s := dgxh200.New()
	require.Len(t, s.Devices, len(setups))
	for i, d := range s.Devices {
		configure(d.(*server.Device), i, setups[i])
	}
	return s
}

func configure(d *server.Device, i int, g gpuSetup) {
	d.UUID = fmt.Sprintf("GPU-00000000-0000-4000-8000-0000000000%02d", i)
	total := d.MemoryInfo.Total
	d.MemoryInfo = nvml.Memory{Total: total, Used: g.usedGiB * gib, Free: total - g.usedGiB*gib}
	ret := func(name string) nvml.Return {
		if r, ok := g.fail[name]; ok {
			return r
		}
		return nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: g.util, Memory: g.memUtil}, ret("utilization")
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return g.temp, ret("temperature") }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return g.powerMW, ret("power") }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return g.limitMW, ret("limit") }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return g.procs, ret("processes") }
}

// agentHandler serves the mocked node through the real agent stack: NVML
// source, /proc mapping over a fake tree, cache and HTTP handler.
func agentHandler(t *testing.T, lib nvml.Interface) http.Handler {
	t.Helper()
	root := t.TempDir()
	fakeproc.Write(t, root, fakeproc.VLLMNode()...)
	src, err := Open(lib)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close()) })
	mapped := nodeagent.WithProcMapping(src, nodeagent.ProcMapper{Root: root, Host: "gpu-node-1"})
	return nodeagent.NewHandler(nodeagent.Config{Node: "gpu-node-1", Source: nodeagent.NewCached(mapped, time.Second)})
}

func get(t *testing.T, h http.Handler, path string) (*httptest.ResponseRecorder, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return rec, rec.Body.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test with -update to create it")
	require.Equal(t, string(want), string(got))
}

func TestGPUsJSONGolden(t *testing.T) {
	h := agentHandler(t, mockNode(t, node()))
	_, body := get(t, h, agentapi.GPUsPath)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, body, "", "  "))
	golden(t, "gpus.json", pretty.Bytes())
}

func TestMetricsGolden(t *testing.T) {
	h := agentHandler(t, mockNode(t, node()))
	rec, body := get(t, h, "/metrics")
	require.Equal(t, nodeagent.MetricsContentType, rec.Header().Get("Content-Type"))
	golden(t, "metrics.prom", body)
}

// TestInstanceMapping checks the join key on its own: which vLLM instance
// and model each GPU and process belongs to.
func TestInstanceMapping(t *testing.T) {
	h := agentHandler(t, mockNode(t, node()))
	_, body := get(t, h, agentapi.GPUsPath)
	var rep agentapi.Report
	require.NoError(t, json.Unmarshal(body, &rep))
	type owner struct{ GPU, Instance, Model string }
	var got []owner
	for _, g := range rep.GPUs {
		got = append(got, owner{fmt.Sprint(g.Index), g.VLLMInstance, g.Model})
		for _, p := range g.Processes {
			got = append(got, owner{fmt.Sprintf("%d/pid %d", g.Index, p.PID), p.VLLMInstance, p.Model})
		}
	}
	require.Equal(t, []owner{
		{"0", "gpu-node-1:8001", "meta-llama/Llama-3.1-8B-Instruct"},
		{"0/pid 2101", "gpu-node-1:8001", "meta-llama/Llama-3.1-8B-Instruct"},
		{"1", "gpu-node-1:8001", "meta-llama/Llama-3.1-8B-Instruct"},
		{"1/pid 2102", "gpu-node-1:8001", "meta-llama/Llama-3.1-8B-Instruct"},
		{"2", "gpu-node-1:8002", "Qwen/Qwen2.5-7B-Instruct"},
		{"2/pid 3100", "gpu-node-1:8002", "Qwen/Qwen2.5-7B-Instruct"},
		{"3", "gpu-node-1:8000", "Qwen/Qwen3-0.6B"},
		{"3/pid 4100", "gpu-node-1:8000", "Qwen/Qwen3-0.6B"},
		{"4", "", ""},
		{"4/pid 5000", "", ""},
		{"5", "gpu-node-1:8002", "Qwen/Qwen2.5-7B-Instruct"},
		{"5/pid 6000", "", ""},
		{"5/pid 3100", "gpu-node-1:8002", "Qwen/Qwen2.5-7B-Instruct"},
		{"6", "", ""},
		{"7", "", ""},
	}, got)
}

func TestDegradedDeviceOnly(t *testing.T) {
	src, err := Open(mockNode(t, node()))
	require.NoError(t, err)
	gpus, err := src.GPUs(context.Background())
	require.NoError(t, err)
	require.Len(t, gpus, 8)
	for _, g := range gpus[:7] {
		require.Empty(t, g.Error, "GPU %d", g.Index)
		require.NotNil(t, g.GPUUtilPercent)
	}
	require.Nil(t, gpus[6].PowerLimitWatts, "not supported is no value, not an error")
	bad := gpus[7]
	require.Equal(t, "utilization: ERROR_GPU_IS_LOST; temperature: ERROR_UNKNOWN; processes: ERROR_GPU_IS_LOST", bad.Error)
	require.Nil(t, bad.GPUUtilPercent)
	require.Nil(t, bad.TemperatureC)
	require.Equal(t, 700.0, *bad.PowerLimitWatts, "what could be read is still reported")
	require.Equal(t, "NVIDIA H200 141GB HBM3e", bad.Name)
}

func TestHandleFailureDegradesThatDevice(t *testing.T) {
	s := mockNode(t, node())
	byIndex := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 3 {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return byIndex(i)
	}
	src, err := Open(s)
	require.NoError(t, err)
	gpus, err := src.GPUs(context.Background())
	require.NoError(t, err)
	require.Len(t, gpus, 8)
	require.Equal(t, agentapi.GPU{Index: 3, Processes: []agentapi.Process{}, Error: "handle: ERROR_GPU_IS_LOST"}, gpus[3])
	require.Equal(t, "GPU-00000000-0000-4000-8000-000000000004", gpus[4].UUID)
}

func TestDeviceCountFailureFailsTheRead(t *testing.T) {
	s := mockNode(t, node())
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_DRIVER_NOT_LOADED }
	src, err := Open(s)
	require.NoError(t, err)
	_, err = src.GPUs(context.Background())
	require.ErrorIs(t, err, nvml.ERROR_DRIVER_NOT_LOADED)
	require.EqualError(t, err, "NVML device count: ERROR_DRIVER_NOT_LOADED")
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		ret     nvml.Return
		wantErr string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, "NVML init: ERROR_LIBRARY_NOT_FOUND: libnvidia-ml.so.1 not found"},
		{nvml.ERROR_NO_PERMISSION, "NVML init: ERROR_NO_PERMISSION"},
	}
	for _, tt := range tests {
		t.Run(tt.ret.String(), func(t *testing.T) {
			s := mockNode(t, node())
			s.InitFunc = func() nvml.Return { return tt.ret }
			_, err := Open(s)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorIs(t, err, tt.ret)
		})
	}
}

// TestOpenRealLibrary runs against whatever this machine has: without the
// NVIDIA driver Open must name the missing library; with it, it must read.
func TestOpenRealLibrary(t *testing.T) {
	src, err := Open(nvml.New())
	if err != nil {
		require.ErrorIs(t, err, nvml.ERROR_LIBRARY_NOT_FOUND)
		require.ErrorContains(t, err, "libnvidia-ml.so.1")
		return
	}
	defer func() { require.NoError(t, src.Close()) }()
	gpus, err := src.GPUs(context.Background())
	require.NoError(t, err)
	for _, g := range gpus {
		t.Logf("GPU %d %s %s error=%q", g.Index, g.UUID, g.Name, g.Error)
	}
}
