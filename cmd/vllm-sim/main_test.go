package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c sim.Config)
	}{
		{"defaults", nil, func(t *testing.T, c sim.Config) {
			require.Len(t, c.Instances, 4)
			for _, ic := range c.Instances {
				require.Equal(t, sim.InstanceConfig{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 1,
					Generation: sim.V1, RateFactor: 1}, ic)
			}
			require.Equal(t, sim.DefaultConfig(), withoutInstances(c))
		}},
		{"layout", []string{"--instances", "3", "--engines-per-instance", "2", "--models", "m1, m2",
			"--hot", "0", "--hot-factor", "5"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, []string{"m1", "m2", "m1"}, models(c))
			require.Equal(t, 5.0, c.Instances[0].RateFactor)
			require.Equal(t, 1.0, c.Instances[1].RateFactor)
			require.Equal(t, 2, c.Instances[2].Engines)
		}},
		{"mixed generations", []string{"--instances", "3", "--v0-instances", "1,2"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, []sim.Generation{sim.V1, sim.V0, sim.V0}, generations(c))
		}},
		{"a 0.32 instance with vLLM's queue limits", []string{"--instances", "3", "--v0-instances", "2", "--v032-instances", "0",
			"--max-num-queued-reqs", "64", "--max-num-queued-tokens", "32000"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, []sim.Generation{sim.V1, sim.V1, sim.V0}, generations(c))
			require.Equal(t, []string{sim.Release032, "", ""}, []string{c.Instances[0].Release, c.Instances[1].Release, c.Instances[2].Release})
			require.Equal(t, 64, c.Engine.MaxNumQueuedReqs)
			require.Equal(t, 32000, c.Engine.MaxNumQueuedTokens)
		}},
		{"all v0", []string{"--generation", "v0", "--instances", "2"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, []sim.Generation{sim.V0, sim.V0}, generations(c))
		}},
		{"engine and load flags", []string{"--num-gpu-blocks", "40", "--step-base", "20ms", "--prompt-tokens", "fixed:64",
			"--profile", "bursts:period=10m,length=1m,factor=4", "--rate", "7", "--listen", "0.0.0.0", "--base-port", "9000"},
			func(t *testing.T, c sim.Config) {
				require.Equal(t, 40, c.Engine.NumGPUBlocks)
				require.Equal(t, 20*time.Millisecond, c.Engine.StepBase)
				require.Equal(t, sim.Dist{Kind: sim.Fixed, A: 64}, c.Engine.PromptTokens)
				require.Equal(t, sim.Profile{Kind: sim.Bursts, Period: 10 * time.Minute, Length: time.Minute, Factor: 4}, c.Profile)
				require.Equal(t, 7.0, c.Rate)
				require.Equal(t, "0.0.0.0", c.Listen)
				require.Equal(t, 9000, c.BasePort)
			}},
		{"vLLM scheduler and sleep flags", []string{"--scheduler-reserve-full-isl=false", "--max-tokens-set-rate", "0.25",
			"--sleep-level", "2", "--engine-abort-rate", "0.05"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, 0.05, c.Engine.EngineAbortRate)
			require.False(t, c.Engine.ReserveFullISL)
			require.Equal(t, 0.25, c.Engine.MaxTokensSetRate)
			require.Equal(t, 2, c.Engine.SleepLevel)
		}},
		{"vLLM defaults", nil, func(t *testing.T, c sim.Config) {
			require.True(t, c.Engine.ReserveFullISL, "scheduler_reserve_full_isl defaults to true")
			require.Equal(t, 1.0, c.Engine.MaxTokensSetRate)
			require.Zero(t, c.Engine.SleepLevel)
		}},
		{"feature defaults are off", nil, func(t *testing.T, c sim.Config) {
			require.Zero(t, c.Engine.SpecTokens)
			require.Zero(t, c.Engine.LoRAAdapters)
			require.Zero(t, c.Engine.ErrorRate)
			require.Equal(t, 0.7, c.Engine.SpecAcceptance)
			require.Equal(t, 4, c.Engine.MaxLoRAs)
			require.Equal(t, sim.KVLoadFail, c.Engine.KVLoadFailurePolicy)
			for _, ic := range c.Instances {
				require.Empty(t, ic.Role)
			}
		}},
		{"feature flags", []string{"--num-speculative-tokens", "4", "--spec-acceptance", "0.6", "--error-rate", "0.01",
			"--lora-adapters", "12", "--max-loras", "3", "--kv-transfer-base", "8ms", "--kv-transfer-per-token", "20us",
			"--kv-bytes-per-token", "65536", "--kv-transfer-fail-rate", "0.02", "--kv-load-failure-policy", "recompute",
			"--kv-notify-fail-rate", "0.03", "--kv-expire-rate", "0.04"}, func(t *testing.T, c sim.Config) {
			p := c.Engine
			require.Equal(t, 4, p.SpecTokens)
			require.Equal(t, 0.6, p.SpecAcceptance)
			require.Equal(t, 0.01, p.ErrorRate)
			require.Equal(t, 12, p.LoRAAdapters)
			require.Equal(t, 3, p.MaxLoRAs)
			require.Equal(t, 8*time.Millisecond, p.KVTransferBase)
			require.Equal(t, 20*time.Microsecond, p.KVTransferPerToken)
			require.Equal(t, 65536, p.KVBytesPerToken)
			require.Equal(t, 0.02, p.KVTransferFailRate)
			require.Equal(t, sim.KVLoadRecompute, p.KVLoadFailurePolicy)
			require.Equal(t, 0.03, p.KVNotifyFailRate)
			require.Equal(t, 0.04, p.KVExpireRate)
		}},
		{"offload defaults are off", nil, func(t *testing.T, c sim.Config) {
			require.Zero(t, c.Engine.KVOffloadingSize)
			require.Equal(t, sim.OffloadNative, c.Engine.KVOffloadingBackend)
		}},
		{"offload flags", []string{"--kv-offloading-size", "8", "--kv-offloading-backend", "native",
			"--kv-offload-bandwidth", "25e9", "--prefix-population", "64"}, func(t *testing.T, c sim.Config) {
			p := c.Engine
			require.Equal(t, 8.0, p.KVOffloadingSize)
			require.Equal(t, sim.OffloadNative, p.KVOffloadingBackend)
			require.Equal(t, 25e9, p.KVOffloadBandwidth)
			require.Equal(t, 64, p.PrefixPopulation)
		}},
		{"roles cycle", []string{"--instances", "5", "--roles", "prefill, decode,decode"}, func(t *testing.T, c sim.Config) {
			var roles []string
			for _, ic := range c.Instances {
				roles = append(roles, ic.Role)
			}
			require.Equal(t, []string{"prefill", "decode", "decode", "prefill", "decode"}, roles)
		}},
		{"histogram buckets", []string{"--histogram-buckets", "time_to_first_token_seconds=0.1, 0.5,1",
			"--histogram-buckets", "vllm:e2e_request_latency_seconds=10,60"}, func(t *testing.T, c sim.Config) {
			require.Equal(t, map[string][]float64{"time_to_first_token_seconds": {0.1, 0.5, 1},
				"e2e_request_latency_seconds": {10, 60}}, c.HistogramBuckets)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := parseArgs(tt.args, io.Discard)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"hot out of range", []string{"--instances", "2", "--hot", "2"}},
		{"v0 not a number", []string{"--v0-instances", "x"}},
		{"no models", []string{"--models", ","}},
		{"zero instances", []string{"--instances", "0"}},
		{"unknown flag", []string{"--gpus", "8"}},
		{"bad profile", []string{"--profile", "wobble"}},
		{"bad generation", []string{"--generation", "v2"}},
		{"stray argument", []string{"serve"}},
		{"missing config", []string{"--config", "/nonexistent/fleet.json"}},
		{"buckets without family", []string{"--histogram-buckets", "0.1,0.5"}},
		{"buckets not numbers", []string{"--histogram-buckets", "time_to_first_token_seconds=fast"}},
		{"buckets empty", []string{"--histogram-buckets", "time_to_first_token_seconds="}},
		{"unknown role", []string{"--roles", "prefill,encode"}},
		{"spec tokens not a number", []string{"--num-speculative-tokens", "many"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parseArgs(tt.args, io.Discard)
			require.Error(t, err)
		})
	}
}

func TestConfigFileOverridesFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
		"rate": 2,
		"instances": [{"model": "big", "engines": 2, "engine": {"num_gpu_blocks": 64}},
		              {"model": "old", "generation": "v0"}]}`), 0o600))
	c, _, err := parseArgs([]string{"--config", path, "--rate", "9", "--seed", "5", "--instances", "7"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 2.0, c.Rate, "the file wins over flags")
	require.Equal(t, uint64(5), c.Seed, "flags fill what the file leaves out")
	require.Equal(t, []string{"big", "old"}, models(c))
	require.Equal(t, 64, c.Instances[0].Engine.NumGPUBlocks)
}

// syncBuffer lets the test read what run prints while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var lineRE = regexp.MustCompile(`^instance (127\.0\.0\.1:\d+) engines (\S+) model (\S+) generation (v0|v1)$`)

func TestRunServesAndAnnounces(t *testing.T) {
	targets := filepath.Join(t.TempDir(), "targets.json")
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--instances", "3", "--engines-per-instance", "2", "--models", "m1,m2",
			"--hot", "0", "--warmup", "1m", "--targets-file", targets}, &out, io.Discard)
	}()
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") == 3 }, 10*time.Second, 10*time.Millisecond)

	var addrs []string
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		require.NotNil(t, m, "line %q", sc.Text())
		require.Equal(t, "0,1", m[2])
		addrs = append(addrs, m[1])
	}
	require.Eventually(t, func() bool { _, err := os.Stat(targets); return err == nil }, 5*time.Second, 10*time.Millisecond)
	data, err := os.ReadFile(targets)
	require.NoError(t, err)
	var groups []struct{ Targets []string }
	require.NoError(t, json.Unmarshal(data, &groups))
	require.Equal(t, addrs, groups[0].Targets)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addrs[0]+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	require.Equal(t, sim.ContentType, resp.Header.Get("Content-Type"))
	require.Contains(t, string(body), `vllm:num_requests_running{engine="1",model_name="m1"}`)

	cancel()
	require.NoError(t, <-done)
}

func TestRunStopsAfterDuration(t *testing.T) {
	start := time.Now()
	err := run(context.Background(), []string{"--instances", "1", "--duration", "200ms"}, io.Discard, io.Discard)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestRunRejectsUnknownHistogramFamily(t *testing.T) {
	err := run(context.Background(), []string{"--histogram-buckets", "ttft=1,2"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
}

func TestRunRejectsV0DataParallel(t *testing.T) {
	err := run(context.Background(), []string{"--generation", "v0", "--engines-per-instance", "2"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
}

func withoutInstances(c sim.Config) sim.Config {
	c.Instances = nil
	return c
}

func models(c sim.Config) []string {
	var out []string
	for _, ic := range c.Instances {
		out = append(out, ic.Model)
	}
	return out
}

func generations(c sim.Config) []sim.Generation {
	var out []sim.Generation
	for _, ic := range c.Instances {
		out = append(out, ic.Generation)
	}
	return out
}

func TestAdvertiseHost(t *testing.T) {
	eps := []sim.Endpoint{{Addr: "[::]:8000"}, {Addr: "0.0.0.0:8001"}}
	tests := []struct {
		name, host string
		want       []string
	}{
		{"keeps listen addresses", "", []string{"[::]:8000", "0.0.0.0:8001"}},
		{"service name", "vllm-sim", []string{"vllm-sim:8000", "vllm-sim:8001"}},
		{"IPv6 host", "fd00::1", []string{"[fd00::1]:8000", "[fd00::1]:8001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advertise(eps, tt.host)
			for i, ep := range got {
				require.Equal(t, tt.want[i], ep.Addr)
			}
			require.Equal(t, "[::]:8000", eps[0].Addr, "input not changed")
		})
	}
}

func TestRunServesCustomHistogramBuckets(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--instances", "1", "--warmup", "1m",
			"--histogram-buckets", "time_to_first_token_seconds=0.25,1,4"}, &out, io.Discard)
	}()
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") == 1 }, 10*time.Second, 10*time.Millisecond)
	m := lineRE.FindStringSubmatch(strings.TrimSpace(out.String()))
	require.NotNil(t, m)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m[1]+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	les := regexp.MustCompile(`vllm:time_to_first_token_seconds_bucket\{[^}]*le="([^"]+)"`).FindAllStringSubmatch(string(body), -1)
	var got []string
	for _, l := range les {
		got = append(got, l[1])
	}
	require.Equal(t, []string{"0.25", "1.0", "4.0", "+Inf"}, got)
	cancel()
	require.NoError(t, <-done)
}

func TestRunServesRoles(t *testing.T) {
	targets := filepath.Join(t.TempDir(), "targets.json")
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--instances", "3", "--roles", "prefill,decode", "--warmup", "30s",
			"--targets-file", targets}, &out, io.Discard)
	}()
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") == 3 }, 10*time.Second, 10*time.Millisecond)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{" role prefill", " role decode", " role prefill"} {
		require.True(t, strings.HasSuffix(lines[i], want), "line %q", lines[i])
	}
	require.Eventually(t, func() bool { _, err := os.Stat(targets); return err == nil }, 5*time.Second, 10*time.Millisecond)
	data, err := os.ReadFile(targets)
	require.NoError(t, err)
	var groups []struct {
		Targets []string
		Labels  map[string]string
	}
	require.NoError(t, json.Unmarshal(data, &groups))
	require.Len(t, groups, 2)
	require.Equal(t, map[string]string{sim.RoleTargetLabel: "prefill"}, groups[0].Labels)
	require.Len(t, groups[0].Targets, 2)
	require.Equal(t, map[string]string{sim.RoleTargetLabel: "decode"}, groups[1].Labels)
	decode := groups[1].Targets[0]

	post := func(path string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+decode+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, post("/debug/kv-transfer-fail?count=3"))
	require.Equal(t, http.StatusBadRequest, post("/debug/kv-expire"))

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+decode+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	require.Contains(t, string(body), `vllm:nixl_xfer_time_seconds_count{engine="0",model_name=`)

	cancel()
	require.NoError(t, <-done)
}

func TestRunRejectsRoleOnV0(t *testing.T) {
	err := run(context.Background(), []string{"--generation", "v0", "--roles", "decode"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, sim.ErrInvalidConfig)
}
