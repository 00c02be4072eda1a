package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// TestMain lets a test run the real main() in a child process.
func TestMain(m *testing.M) {
	if os.Getenv("VLLM_NODE_AGENT_RUN_MAIN") == "1" {
		os.Args = append([]string{"vllm-node-agent"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o options)
		wantErr string
	}{
		{name: "defaults", args: nil, check: func(t *testing.T, o options) {
			require.Equal(t, "127.0.0.1:9400", o.listen)
			require.Equal(t, "/proc", o.procRoot)
			require.Equal(t, time.Second, o.cacheTTL)
			require.NotEmpty(t, o.instanceHost)
			require.Zero(t, o.simulate)
		}},
		{name: "all", args: []string{"--listen", ":9500", "--node-name", "n1", "--instance-host", "10.0.0.5", "--proc-root", "/host/proc",
			"--cache-ttl", "250ms", "--token-file", "/t", "--simulate", "8", "--follow", "http://a:8000/metrics, http://b:8001/metrics,", "--sim-delay", "3s"},
			check: func(t *testing.T, o options) {
				require.Equal(t, options{listen: ":9500", node: "n1", instanceHost: "10.0.0.5", procRoot: "/host/proc", cacheTTL: 250 * time.Millisecond,
					tokenFile: "/t", simulate: 8, follow: []string{"http://a:8000/metrics", "http://b:8001/metrics"}, simDelay: 3 * time.Second}, o)
			}},
		{name: "follow needs simulate", args: []string{"--follow", "http://a/metrics"}, wantErr: "need --simulate"},
		{name: "delay needs simulate", args: []string{"--sim-delay", "1s"}, wantErr: "need --simulate"},
		{name: "negative simulate", args: []string{"--simulate", "-1"}, wantErr: "--simulate -1"},
		{name: "negative ttl", args: []string{"--cache-ttl", "-1s"}, wantErr: "must not be negative"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"--gpus", "2"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, o)
		})
	}
}

// startAgent runs the agent in-process until the test ends.
func startAgent(t *testing.T, args []string, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), func(k string) string { return env[k] }, io.Discard, func(a string) { addrc <- a })
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-errc)
	})
	select {
	case a := <-addrc:
		return "http://" + a
	case err := <-errc:
		t.Fatalf("agent did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not start")
	}
	return ""
}

func getStatus(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

func TestRunSimulatedWithTokenFromEnv(t *testing.T) {
	base := startAgent(t, []string{"--simulate", "4", "--node-name", "sim-1", "--instance-host", "sim-1"}, map[string]string{"VLLM_NODE_AGENT_TOKEN": "tok"})
	code, _ := getStatus(t, base+"/v1/gpus", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body := getStatus(t, base+"/healthz", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", string(body))
	code, body = getStatus(t, base+"/v1/gpus", "tok")
	require.Equal(t, http.StatusOK, code)
	var rep agentapi.Report
	require.NoError(t, json.Unmarshal(body, &rep))
	require.Equal(t, "sim-1", rep.Node)
	require.Len(t, rep.GPUs, 4)
	require.Equal(t, "sim-1:8003", rep.GPUs[3].VLLMInstance)
	code, body = getStatus(t, base+"/metrics", "tok")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `vllm_node_gpu_memory_total_bytes{gpu="3",uuid="`)
}

func TestRunTokenFileWinsAndMustExist(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	base := startAgent(t, []string{"--simulate", "1", "--token-file", file}, map[string]string{"VLLM_NODE_AGENT_TOKEN": "from-env"})
	code, _ := getStatus(t, base+"/v1/gpus", "from-env")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = getStatus(t, base+"/v1/gpus", "from-file")
	require.Equal(t, http.StatusOK, code)

	err := run(context.Background(), []string{"--simulate", "1", "--token-file", file + ".missing"}, func(string) string { return "" }, io.Discard, nil)
	require.ErrorContains(t, err, "token file")
}

// TestNoGPUExitsNonZero runs the real main() without --simulate and decides
// from what the agent says, never from how long it runs: an agent that
// exits must exit 1 naming the NVML library and --simulate; an agent that
// says it listens must be reading NVML and serve the GPUs NVML reports, so
// on a machine without the NVIDIA driver serving at all fails the test.
func TestNoGPUExitsNonZero(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "VLLM_NODE_AGENT_RUN_MAIN=1")
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var said strings.Builder
	listening := ""
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "vllm-node-agent listening") {
			listening = sc.Text()
			break
		}
	}
	if listening != "" {
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		requireServesNVML(t, listening)
		return
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the agent said: %s", said.String())
	require.Equal(t, 1, exit.ExitCode())
	require.Contains(t, said.String(), "libnvidia-ml.so.1")
	require.Contains(t, said.String(), "--simulate")
}

// requireServesNVML checks an agent that started without --simulate: it
// reads NVML, and NVML gave it real GPUs.
func requireServesNVML(t *testing.T, listening string) {
	t.Helper()
	require.Contains(t, listening, "source=nvml", "without --simulate the agent reads NVML or exits")
	lib, ok := findNVML()
	require.True(t, ok, "the agent serves, but this machine has no libnvidia-ml.so.1: it must exit 1 instead")
	t.Logf("NVML is here (%s): the agent serves", lib)
	m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(listening)
	require.Len(t, m, 2, listening)
	code, body := getStatus(t, "http://"+m[1]+"/v1/gpus", "")
	require.Equal(t, http.StatusOK, code, string(body))
	var rep agentapi.Report
	require.NoError(t, json.Unmarshal(body, &rep))
	require.NotEmpty(t, rep.GPUs, "an agent serving NVML without GPUs: %s", body)
	for _, g := range rep.GPUs {
		require.True(t, strings.HasPrefix(g.UUID, "GPU-"), "NVML UUIDs start with GPU-: %q", g.UUID)
	}
}

// findNVML looks for the NVIDIA management library where the dynamic loader
// would find it: the loader's cache, LD_LIBRARY_PATH and the usual folders.
func findNVML() (string, bool) {
	const lib = "libnvidia-ml.so.1"
	for _, ldconfig := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if out, err := exec.Command(ldconfig, "-p").Output(); err == nil && strings.Contains(string(out), lib) {
			return ldconfig + " -p", true
		}
	}
	dirs := filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))
	dirs = append(dirs, "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
		"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/local/cuda/lib64")
	for _, d := range dirs {
		p := filepath.Join(d, lib)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// TestVersionFlag: --version prints the version the release build sets and
// stops, like --help.
func TestVersionFlag(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "1.2.3"
	var out strings.Builder
	_, err := parseFlags([]string{"--version"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Equal(t, "vllm-node-agent 1.2.3\n", out.String())
}
