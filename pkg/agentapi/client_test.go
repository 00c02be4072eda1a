package agentapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/nodeagent"
)

const secret = "tok-3f9c2a"

func newClient(t testing.TB, o agentapi.Options) *agentapi.Client {
	t.Helper()
	c, err := agentapi.NewClient(o)
	require.NoError(t, err)
	return c
}

// serve starts a test server answering with h.
func serve(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchOneAgentCases(t *testing.T) {
	okBody := `{"node":"n1","gpus":[{"index":0,"uuid":"GPU-1","name":"H","memoryUsedBytes":5,"processes":[]}]}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		path    string
		want    *agentapi.Report
		wantErr string
	}{
		{name: "ok", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/gpus" || r.Header.Get("Authorization") != "Bearer "+secret || strings.Contains(r.URL.String(), secret) {
				http.Error(w, "bad request "+r.URL.String(), 400)
				return
			}
			_, _ = w.Write([]byte(okBody))
		}, want: &agentapi.Report{Node: "n1", GPUs: []agentapi.GPU{{Index: 0, UUID: "GPU-1", Name: "H", MemoryUsedBytes: agentapi.Float(5), Processes: []agentapi.Process{}}}}},
		{name: "base URL with path and full path", path: "/agent/v1/gpus", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/agent/v1/gpus" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(`{"node":"n2","gpus":[]}`))
		}, want: &agentapi.Report{Node: "n2", GPUs: []agentapi.GPU{}}},
		{name: "unauthorized", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":"missing or wrong bearer token"}`, 401)
		}, wantErr: `HTTP 401 Unauthorized (check the agent token): {"error":"missing or wrong bearer token"}`},
		{name: "agent cannot read GPUs", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":"NVML device count: ERROR_UNKNOWN"}`, 503)
		}, wantErr: "HTTP 503 Service Unavailable: {\"error\":\"NVML device count: ERROR_UNKNOWN\"}"},
		{name: "not JSON", handler: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<html>"))
		}, wantErr: "invalid JSON from agent"},
		{name: "redirect is not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.invalid/v1/gpus", http.StatusFound)
		}, wantErr: "HTTP 302 Found"},
	}
	c := newClient(t, agentapi.Options{Token: secret, Timeout: 10 * time.Second})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := serve(t, tt.handler) + tt.path
			res := c.Fetch(context.Background(), []string{u})
			if tt.wantErr != "" {
				require.Empty(t, res.Reports)
				require.Len(t, res.Errors, 1)
				require.Equal(t, u, res.Errors[0].URL)
				require.ErrorContains(t, res.Errors[0], "node agent "+u+": "+tt.wantErr)
				require.NotContains(t, res.Errors[0].Error(), secret)
				return
			}
			require.Empty(t, res.Errors)
			require.Len(t, res.Reports, 1)
			require.Equal(t, u, res.Reports[0].URL)
			require.Equal(t, *tt.want, res.Reports[0].Report)
		})
	}
}

func TestFetchBadURLs(t *testing.T) {
	c := newClient(t, agentapi.Options{Token: secret})
	res := c.Fetch(context.Background(), []string{"ftp://x", "http://user:pw@[::1", "node-without-scheme:9400"})
	require.Len(t, res.Errors, 3)
	for _, e := range res.Errors {
		require.ErrorContains(t, e, "not an http(s) URL with a host")
		require.NotContains(t, e.Error(), "pw")
	}
}

func TestFetchEmpty(t *testing.T) {
	res := newClient(t, agentapi.Options{}).Fetch(context.Background(), nil)
	require.Empty(t, res.Reports)
	require.Empty(t, res.Errors)
	require.False(t, res.Time.IsZero())
}

func TestFetchBoundsConcurrency(t *testing.T) {
	const pool = 3
	var inflight, peak atomic.Int32
	h := func(w http.ResponseWriter, _ *http.Request) {
		n := inflight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// Hold the request until the pool is full (or a while has passed),
		// so a slow machine still shows the bound exactly.
		for deadline := time.Now().Add(300 * time.Millisecond); inflight.Load() < pool && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond)
		inflight.Add(-1)
		_, _ = w.Write([]byte(`{"node":"n","gpus":[]}`))
	}
	urls := make([]string, 12)
	for i := range urls {
		urls[i] = serve(t, h)
	}
	res := newClient(t, agentapi.Options{Concurrency: pool}).Fetch(context.Background(), urls)
	require.Len(t, res.Reports, 12)
	require.Equal(t, int32(pool), peak.Load())
	for i, r := range res.Reports {
		require.Equal(t, urls[i], r.URL, "reports keep the order of the URLs")
	}
}

func TestFetchCallerCancels(t *testing.T) {
	slow := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := newClient(t, agentapi.Options{Timeout: 5 * time.Second, Concurrency: 1}).Fetch(ctx, []string{slow, slow})
	require.Len(t, res.Errors, 2)
	for _, e := range res.Errors {
		require.ErrorIs(t, e, context.DeadlineExceeded)
	}
	require.ErrorContains(t, res.Errors[0], "query ended before the agent answered")
	require.ErrorContains(t, res.Errors[1], "not asked")
}

// TestFetchFleetOfRealAgents runs eight simulated agents (the agent's own
// handler, on loopback), kills one and makes one slower than the timeout:
// the fetch answers for the other six with errors naming the two.
func TestFetchFleetOfRealAgents(t *testing.T) {
	const n, timeout = 8, time.Second
	urls := make([]string, n)
	servers := make([]*httptest.Server, n)
	for i := range n {
		src, err := nodeagent.NewSimulated(nodeagent.SimConfig{GPUs: 8, Node: fmt.Sprintf("node-%d", i), Host: fmt.Sprintf("node-%d", i)})
		require.NoError(t, err)
		cfg := nodeagent.Config{Node: fmt.Sprintf("node-%d", i), Source: nodeagent.NewCached(src, time.Second), Token: secret}
		if i == 5 {
			cfg.Delay = 10 * timeout
		}
		servers[i] = httptest.NewServer(nodeagent.NewHandler(cfg))
		t.Cleanup(servers[i].Close)
		urls[i] = servers[i].URL
	}
	servers[2].Close() // killed
	start := time.Now()
	res := newClient(t, agentapi.Options{Token: secret, Timeout: timeout}).Fetch(context.Background(), urls)
	elapsed := time.Since(start)

	require.Less(t, elapsed, 3*timeout, "a slow agent costs about the timeout, not its delay")
	require.Len(t, res.Reports, n-2)
	for _, r := range res.Reports {
		require.Len(t, r.Report.GPUs, 8)
		require.Equal(t, r.Report.Node+":8000", r.Report.GPUs[0].VLLMInstance)
	}
	require.Len(t, res.Errors, 2)
	require.Equal(t, urls[2], res.Errors[0].URL)
	require.ErrorContains(t, res.Errors[0], "node agent "+urls[2]+": ")
	require.ErrorContains(t, res.Errors[0], "connection refused")
	require.Equal(t, urls[5], res.Errors[1].URL)
	require.EqualError(t, res.Errors[1], "node agent "+urls[5]+": no answer within 1s: context deadline exceeded")
	require.True(t, errors.Is(res.Errors[1], context.DeadlineExceeded))
	for _, e := range res.Errors {
		require.NotContains(t, e.Error(), secret)
	}
}

func TestFetchConcurrentCallers(t *testing.T) {
	u := serve(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"node":"n","gpus":[]}`)) })
	c := newClient(t, agentapi.Options{Timeout: 10 * time.Second})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res := c.Fetch(context.Background(), []string{u, u, u})
			require.Len(t, res.Reports, 3)
		})
	}
	wg.Wait()
}

func TestRedactURL(t *testing.T) {
	require.Equal(t, "http://host:9400/x", agentapi.RedactURL("http://user:pw@host:9400/x"))
	require.Equal(t, "<invalid URL>", agentapi.RedactURL("http://[::1"))
}

func TestFetchRefusesHugeAnswer(t *testing.T) {
	u := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"node":"` + strings.Repeat("x", 5<<20) + `"}`))
	})
	res := newClient(t, agentapi.Options{Timeout: 10 * time.Second}).Fetch(context.Background(), []string{u})
	require.Len(t, res.Errors, 1)
	require.EqualError(t, res.Errors[0], "node agent "+u+": answer larger than 4 MiB")
}
