package nodeagent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

func twoGPUs() []agentapi.GPU {
	return []agentapi.GPU{
		{Index: 0, UUID: "GPU-0", Name: "H", MemoryUsedBytes: agentapi.Float(1 << 30), MemoryTotalBytes: agentapi.Float(2 << 30),
			GPUUtilPercent: agentapi.Float(50), MemUtilPercent: agentapi.Float(25), TemperatureC: agentapi.Float(60),
			PowerWatts: agentapi.Float(300.5), PowerLimitWatts: agentapi.Float(700),
			Processes:    []agentapi.Process{{PID: 7, UsedMemoryBytes: agentapi.Float(1 << 30), VLLMInstance: "n:8000", Model: "m"}},
			VLLMInstance: "n:8000", Model: "m"},
		{Index: 1, UUID: "GPU-1", Name: "H", MemoryTotalBytes: agentapi.Float(2 << 30), Processes: []agentapi.Process{}, Error: "memory: ERROR_GPU_IS_LOST"},
	}
}

func staticSource(gpus []agentapi.GPU, err error) Source {
	return SourceFunc(func(context.Context) ([]agentapi.GPU, error) { return gpus, err })
}

func do(t *testing.T, h http.Handler, method, path, auth string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.String()
}

func TestHandlerAuthAndMethods(t *testing.T) {
	h := NewHandler(Config{Node: "n", Source: staticSource(twoGPUs(), nil), Token: "s3cret"})
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"gpus without token", "GET", "/v1/gpus", "", 401},
		{"gpus wrong token", "GET", "/v1/gpus", "Bearer nope", 401},
		{"gpus longer wrong token", "GET", "/v1/gpus", "Bearer s3cret-and-more", 401},
		{"gpus basic auth", "GET", "/v1/gpus", "Basic czNjcmV0", 401},
		{"gpus right token", "GET", "/v1/gpus", "Bearer s3cret", 200},
		{"scheme case-insensitive", "GET", "/v1/gpus", "bearer s3cret", 200},
		{"metrics without token", "GET", "/metrics", "", 401},
		{"metrics right token", "GET", "/metrics", "Bearer s3cret", 200},
		{"healthz is open", "GET", "/healthz", "", 200},
		{"head allowed", "HEAD", "/healthz", "", 200},
		{"post refused", "POST", "/v1/gpus", "Bearer s3cret", 405},
		{"delete refused", "DELETE", "/metrics", "", 405},
		{"put healthz refused", "PUT", "/healthz", "", 405},
		{"unknown path", "GET", "/v1/other", "Bearer s3cret", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := do(t, h, tt.method, tt.path, tt.auth)
			require.Equal(t, tt.want, code, body)
			require.NotContains(t, body, "s3cret")
			if code == 401 {
				require.Equal(t, `Bearer realm="vllm-node-agent"`, hdr.Get("WWW-Authenticate"))
			}
			if code == 405 {
				require.Equal(t, "GET, HEAD", hdr.Get("Allow"))
			}
		})
	}
}

func TestHandlerGPUsJSON(t *testing.T) {
	h := NewHandler(Config{Node: "node-a", Source: staticSource(twoGPUs(), nil)})
	code, hdr, body := do(t, h, "GET", "/v1/gpus", "")
	require.Equal(t, 200, code)
	require.Equal(t, "application/json", hdr.Get("Content-Type"))
	require.JSONEq(t, `{"node":"node-a","gpus":[
	  {"index":0,"uuid":"GPU-0","name":"H","memoryUsedBytes":1073741824,"memoryTotalBytes":2147483648,
	   "gpuUtilPercent":50,"memUtilPercent":25,"temperatureC":60,"powerWatts":300.5,"powerLimitWatts":700,
	   "processes":[{"pid":7,"usedMemoryBytes":1073741824,"vllmInstance":"n:8000","model":"m"}],
	   "vllmInstance":"n:8000","model":"m"},
	  {"index":1,"uuid":"GPU-1","name":"H","memoryUsedBytes":null,"memoryTotalBytes":2147483648,
	   "gpuUtilPercent":null,"memUtilPercent":null,"temperatureC":null,"powerWatts":null,"powerLimitWatts":null,
	   "processes":[],"vllmInstance":"","model":"","error":"memory: ERROR_GPU_IS_LOST"}]}`, body)
}

func TestHandlerNoGPUsIsEmptyArray(t *testing.T) {
	h := NewHandler(Config{Node: "n", Source: staticSource(nil, nil)})
	_, _, body := do(t, h, "GET", "/v1/gpus", "")
	require.JSONEq(t, `{"node":"n","gpus":[]}`, body)
}

func TestHandlerMetricsText(t *testing.T) {
	h := NewHandler(Config{Node: "n", Source: staticSource(twoGPUs(), nil)})
	code, hdr, body := do(t, h, "GET", "/metrics", "")
	require.Equal(t, 200, code)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", hdr.Get("Content-Type"))
	require.Equal(t, `# HELP vllm_node_gpu_memory_used_bytes GPU memory in use, in bytes.
# TYPE vllm_node_gpu_memory_used_bytes gauge
vllm_node_gpu_memory_used_bytes{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 1.073741824e+09
# HELP vllm_node_gpu_memory_total_bytes GPU memory in total, in bytes.
# TYPE vllm_node_gpu_memory_total_bytes gauge
vllm_node_gpu_memory_total_bytes{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 2.147483648e+09
vllm_node_gpu_memory_total_bytes{gpu="1",uuid="GPU-1",name="H"} 2.147483648e+09
# HELP vllm_node_gpu_utilization_ratio Fraction of the last sample period in which a kernel ran on the GPU (0-1).
# TYPE vllm_node_gpu_utilization_ratio gauge
vllm_node_gpu_utilization_ratio{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 0.5
# HELP vllm_node_gpu_memory_utilization_ratio Fraction of the last sample period in which device memory was read or written (0-1).
# TYPE vllm_node_gpu_memory_utilization_ratio gauge
vllm_node_gpu_memory_utilization_ratio{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 0.25
# HELP vllm_node_gpu_temperature_celsius GPU core temperature, in degrees Celsius.
# TYPE vllm_node_gpu_temperature_celsius gauge
vllm_node_gpu_temperature_celsius{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 60
# HELP vllm_node_gpu_power_watts GPU power draw, in watts.
# TYPE vllm_node_gpu_power_watts gauge
vllm_node_gpu_power_watts{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 300.5
# HELP vllm_node_gpu_power_limit_watts GPU enforced power limit, in watts.
# TYPE vllm_node_gpu_power_limit_watts gauge
vllm_node_gpu_power_limit_watts{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 700
# HELP vllm_node_gpu_healthy 1 when every reading of the GPU succeeded, 0 when some failed (see /v1/gpus for the error).
# TYPE vllm_node_gpu_healthy gauge
vllm_node_gpu_healthy{gpu="0",uuid="GPU-0",name="H",vllm_instance="n:8000",model_name="m"} 1
vllm_node_gpu_healthy{gpu="1",uuid="GPU-1",name="H"} 0
`, body)
}

func TestHandlerSourceFailureIs503(t *testing.T) {
	h := NewHandler(Config{Node: "n", Source: staticSource(nil, errors.New("NVML device count: ERROR_UNKNOWN"))})
	for _, path := range []string{"/v1/gpus", "/metrics"} {
		code, _, body := do(t, h, "GET", path, "")
		require.Equal(t, 503, code)
		require.JSONEq(t, `{"error":"NVML device count: ERROR_UNKNOWN"}`, body)
	}
}

func TestHandlerDelay(t *testing.T) {
	h := NewHandler(Config{Node: "n", Source: staticSource(twoGPUs(), nil), Delay: 100 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	start := time.Now()
	resp, err := http.Get(srv.URL + "/healthz")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, "ok\n", string(b))
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/gpus", nil)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestNewServerTimeouts(t *testing.T) {
	s := NewServer("127.0.0.1:0", http.NotFoundHandler())
	require.Positive(t, s.ReadHeaderTimeout)
	require.Positive(t, s.ReadTimeout)
	require.Positive(t, s.WriteTimeout)
	require.Positive(t, s.IdleTimeout)
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good, empty := dir+"/tok", dir+"/empty"
	require.NoError(t, writeFile(good, "  abc123\n"))
	require.NoError(t, writeFile(empty, "\n"))
	tests := []struct {
		name, file, env, want, wantErr string
	}{
		{"none", "", "", "", ""},
		{"env", "", " fromenv ", "fromenv", ""},
		{"file wins over env", good, "fromenv", "abc123", ""},
		{"empty file", empty, "", "", "file is empty"},
		{"missing file", dir + "/nope", "", "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadToken(tt.file, tt.env)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
