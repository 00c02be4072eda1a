package sim

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestStartServesEveryInstance(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Speed, c.Tick = 120, 5*time.Millisecond },
		InstanceConfig{Model: "a", Engines: 2}, InstanceConfig{Model: "b", Generation: V0})
	require.NoError(t, f.Advance(time.Minute))
	eps, err := f.Start(context.Background())
	require.NoError(t, err)
	require.Len(t, eps, 2)
	require.Equal(t, []string{"0", "1"}, eps[0].Engines)
	require.Equal(t, V0, eps[1].Generation)

	tests := []struct {
		name, family string
		ep           Endpoint
	}{
		{"v1 instance", "vllm:kv_cache_usage_perc", eps[0]},
		{"v0 instance", "vllm:gpu_cache_usage_perc", eps[1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, _, err := net.SplitHostPort(tt.ep.Addr)
			require.NoError(t, err)
			require.Equal(t, "127.0.0.1", host)
			resp, body := get(t, "http://"+tt.ep.Addr+"/metrics")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, ContentType, resp.Header.Get("Content-Type"))
			require.Contains(t, parseExposition(t, body).families, tt.family)
			resp, _ = get(t, "http://"+tt.ep.Addr+"/health")
			require.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}

	t.Run("simulated time follows the wall clock at speed", func(t *testing.T) {
		start := f.Now()
		time.Sleep(200 * time.Millisecond)
		require.Greater(t, f.Now()-start, 10*time.Second) // 120× for ≥ 0.2 s is ≥ 24 s
	})
	t.Run("manual time is refused while running", func(t *testing.T) {
		require.ErrorIs(t, f.Advance(time.Second), ErrRunning)
		_, err := f.Start(context.Background())
		require.ErrorIs(t, err, ErrRunning)
	})
	t.Run("close stops serving and freezes time", func(t *testing.T) {
		require.NoError(t, f.Close())
		_, err := net.DialTimeout("tcp", eps[0].Addr, time.Second)
		require.Error(t, err)
		frozen := f.Now()
		time.Sleep(20 * time.Millisecond)
		require.Equal(t, frozen, f.Now())
		require.NoError(t, f.Advance(time.Second))
		_, err = f.Start(context.Background())
		require.ErrorIs(t, err, ErrClosed)
		require.NoError(t, f.Close(), "close is idempotent")
	})
}

func TestStartStopsWithContext(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	eps, err := f.Start(ctx)
	require.NoError(t, err)
	cancel()
	require.Eventually(t, func() bool { return f.Advance(time.Second) == nil }, 5*time.Second, 10*time.Millisecond)
	_, err = net.DialTimeout("tcp", eps[0].Addr, time.Second)
	require.Error(t, err)
}

func TestStartOnFixedPorts(t *testing.T) {
	// Find two adjacent free ports; retry if something else grabs them.
	for attempt := range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		base := ln.Addr().(*net.TCPAddr).Port
		require.NoError(t, ln.Close())
		f := newTestFleet(t, func(c *Config) { c.BasePort = base },
			InstanceConfig{Model: "a"}, InstanceConfig{Model: "b"})
		eps, err := f.Start(context.Background())
		if err != nil && attempt < 4 {
			continue
		}
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:"+strconv.Itoa(base), eps[0].Addr)
		require.Equal(t, "127.0.0.1:"+strconv.Itoa(base+1), eps[1].Addr)
		return
	}
}

func TestStartFailsWhenPortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	f := newTestFleet(t, nil, InstanceConfig{Model: "a"}, InstanceConfig{Model: "b", Port: port})
	_, err = f.Start(context.Background())
	require.Error(t, err)
	require.NoError(t, f.Advance(time.Second), "a failed start leaves the fleet usable")
}

func TestTargetsFile(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "a"}, InstanceConfig{Model: "b", Engines: 2})
	path := filepath.Join(t.TempDir(), "targets.json")
	require.Error(t, WriteTargetsFile(path, f.Endpoints()), "no addresses before Start")

	eps, err := f.Start(context.Background())
	require.NoError(t, err)
	require.NoError(t, WriteTargetsFile(path, eps))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var groups []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	require.NoError(t, json.Unmarshal(data, &groups))
	require.Len(t, groups, 1)
	require.Equal(t, []string{eps[0].Addr, eps[1].Addr}, groups[0].Targets)
	require.Empty(t, groups[0].Labels)
}
