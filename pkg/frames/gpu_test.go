package frames_test

import (
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/frames"
)

// init registers -update (rewrite golden files) unless another test file of
// this package already did.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

var fetchedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// gpuReports are two nodes as agents report them, listed out of order: node
// b has a mapped and an idle GPU, node a a mapped GPU and a degraded one.
func gpuReports() []agentapi.AgentReport {
	f := agentapi.Float
	return []agentapi.AgentReport{
		{URL: "http://b:9400", Report: agentapi.Report{Node: "node-b", GPUs: []agentapi.GPU{
			{Index: 1, UUID: "GPU-b1", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: f(1 << 29), MemoryTotalBytes: f(85520809984),
				GPUUtilPercent: f(0), MemUtilPercent: f(0), TemperatureC: f(30), PowerWatts: f(70), PowerLimitWatts: f(700), Processes: []agentapi.Process{}},
			{Index: 0, UUID: "GPU-b0", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: f(76e9), MemoryTotalBytes: f(85520809984),
				GPUUtilPercent: f(93), MemUtilPercent: f(56), TemperatureC: f(72), PowerWatts: f(611.5), PowerLimitWatts: f(700),
				VLLMInstance: "node-b:8000", Model: "meta-llama/Llama-3.1-8B-Instruct"},
		}}},
		{URL: "http://a:9400", Report: agentapi.Report{Node: "node-a", GPUs: []agentapi.GPU{
			{Index: 0, UUID: "GPU-a0", Name: "NVIDIA H200 141GB HBM3e", MemoryUsedBytes: f(128849018880), MemoryTotalBytes: f(151397597184),
				GPUUtilPercent: f(97), MemUtilPercent: f(61), TemperatureC: f(71), PowerWatts: f(612.25), PowerLimitWatts: f(700),
				VLLMInstance: "node-a:8001", Model: "Qwen/Qwen2.5-7B-Instruct"},
			{Index: 1, UUID: "GPU-a1", Name: "NVIDIA H200 141GB HBM3e", MemoryUsedBytes: f(1 << 30), MemoryTotalBytes: f(151397597184),
				PowerWatts: f(80), PowerLimitWatts: f(700), Error: "utilization: ERROR_GPU_IS_LOST; temperature: ERROR_UNKNOWN"},
		}}},
	}
}

func failedAgents() []*agentapi.AgentError {
	return []*agentapi.AgentError{
		{URL: "http://c:9400", Err: errors.New("dial tcp 10.0.0.3:9400: connect: connection refused")},
		{URL: "http://d:9400", Err: fmt.Errorf("no answer within 2s: %w", errors.New("context deadline exceeded"))},
	}
}

func TestGPUNotices(t *testing.T) {
	got := frames.GPUNotices(agentapi.Result{Reports: gpuReports(), Errors: failedAgents()})
	require.Equal(t, []data.Notice{
		{Severity: data.NoticeSeverityWarning, Text: "node agent http://c:9400: dial tcp 10.0.0.3:9400: connect: connection refused"},
		{Severity: data.NoticeSeverityWarning, Text: "node agent http://d:9400: no answer within 2s: context deadline exceeded"},
		{Severity: data.NoticeSeverityWarning, Text: "node node-a GPU 1 could only be partly read: utilization: ERROR_GPU_IS_LOST; temperature: ERROR_UNKNOWN"},
	}, got)
}

func TestGPUNoticesAreBounded(t *testing.T) {
	var errs []*agentapi.AgentError
	for i := range 25 {
		errs = append(errs, &agentapi.AgentError{URL: fmt.Sprintf("http://n%d:9400", i), Err: errors.New("connection refused")})
	}
	got := frames.GPUNotices(agentapi.Result{Errors: errs})
	require.Len(t, got, 11)
	require.Equal(t, "node agent http://n9:9400: connection refused", got[9].Text)
	require.Equal(t, "15 more node agents did not answer", got[10].Text)
}

func TestGPUTableGolden(t *testing.T) {
	notices := frames.GPUNotices(agentapi.Result{Reports: gpuReports(), Errors: failedAgents()})
	tests := []struct {
		name    string
		reports []agentapi.AgentReport
		notices []data.Notice
	}{
		{"gpu-table", gpuReports(), notices},
		{"gpu-table-empty", nil, notices[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := frames.GPUTable(tt.reports, tt.notices)
			experimental.CheckGoldenJSONFrame(t, "testdata", tt.name, f, updateGolden())
		})
	}
}

func TestGPUSeriesGolden(t *testing.T) {
	notices := frames.GPUNotices(agentapi.Result{Reports: gpuReports(), Errors: failedAgents()})
	tests := []struct {
		name    string
		reports []agentapi.AgentReport
		notices []data.Notice
	}{
		{"gpu-series", gpuReports(), notices},
		{"gpu-series-empty", nil, notices[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := frames.GPUSeries(tt.reports, fetchedAt, tt.notices)
			experimental.CheckGoldenJSONResponse(t, "testdata", tt.name, &backend.DataResponse{Frames: fs}, updateGolden())
		})
	}
}

func TestGPUSeriesShape(t *testing.T) {
	fs := frames.GPUSeries(gpuReports(), fetchedAt, nil)
	// 4 GPUs × 7 readings, less the 3 node-a GPU 1 could not read.
	require.Len(t, fs, 25)
	seen := map[string]bool{}
	for _, f := range fs {
		require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
		require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
		require.Equal(t, 1, f.Rows())
		key := f.Fields[1].Labels.String()
		require.False(t, seen[key], "duplicate series %s", key)
		seen[key] = true
	}
	first := fs[0].Fields[1]
	require.Equal(t, data.Labels{"node": "node-a", "gpu": "0", "uuid": "GPU-a0", "vllm_instance": "node-a:8001",
		"model_name": "Qwen/Qwen2.5-7B-Instruct", "signal": "memory_used"}, first.Labels)
	require.Equal(t, "bytes", first.Config.Unit)
	unmapped := fs[len(fs)-1].Fields[1]
	require.Equal(t, data.Labels{"node": "node-b", "gpu": "1", "uuid": "GPU-b1", "signal": "power_limit"}, unmapped.Labels)
}
