package plugin_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/memlimit"
	"github.com/inferops/vllm-datasource/pkg/plugin"
)

// connCounter is an httptest server that counts its open connections.
type connCounter struct {
	*httptest.Server
	mu   sync.Mutex
	open map[net.Conn]bool
}

func newConnCounter(t *testing.T, h http.HandlerFunc) *connCounter {
	t.Helper()
	c := &connCounter{open: map[net.Conn]bool{}}
	c.Server = httptest.NewUnstartedServer(h)
	c.Config.ConnState = func(conn net.Conn, st http.ConnState) {
		if os.Getenv("DEBUG_CONNS") != "" {
			println(conn.RemoteAddr().String(), st.String())
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch st {
		case http.StateNew:
			c.open[conn] = true
		case http.StateClosed, http.StateHijacked:
			delete(c.open, conn)
		}
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func (c *connCounter) openConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// emptyPrometheus answers every API call with an empty success.
func emptyPrometheus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/query_range"):
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	case strings.HasSuffix(r.URL.Path, "/query"):
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	default:
		_, _ = w.Write([]byte(`{"status":"success","data":[]}`))
	}
}

// settled polls cond for up to five seconds on the test's own goroutine.
func settled(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func settings(promURL, jsonData string) backend.DataSourceInstanceSettings {
	return backend.DataSourceInstanceSettings{UID: "dispose", URL: promURL, JSONData: json.RawMessage(jsonData)}
}

func queryReq(ds backend.DataSourceInstanceSettings, js ...string) *backend.QueryDataRequest {
	now := time.Now()
	req := &backend.QueryDataRequest{PluginContext: backend.PluginContext{DataSourceInstanceSettings: &ds}}
	for i, j := range js {
		req.Queries = append(req.Queries, backend.DataQuery{RefID: string(rune('A' + i)), JSON: json.RawMessage(j),
			Interval: time.Second, MaxDataPoints: 100, TimeRange: backend.TimeRange{From: now.Add(-time.Minute), To: now}})
	}
	return req
}

func newInstance(t *testing.T, ds backend.DataSourceInstanceSettings) *plugin.Datasource {
	t.Helper()
	inst, err := plugin.NewDatasource(context.Background(), ds)
	require.NoError(t, err)
	return inst.(*plugin.Datasource)
}

// TestDisposeClosesConnections: after Dispose the instance holds no
// connection to Prometheus or the agents and its goroutines are gone.
func TestDisposeClosesConnections(t *testing.T) {
	prom := newConnCounter(t, emptyPrometheus)
	agent := newConnCounter(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"node":"n1","gpus":[]}`))
	})
	baseline := runtime.NumGoroutine()
	ds := settings(prom.URL, `{"agentUrls":["`+agent.URL+`"]}`)
	d := newInstance(t, ds)
	resp, err := d.QueryData(context.Background(), queryReq(ds, `{"queryType":"queue"}`, `{"queryType":"gpu"}`))
	require.NoError(t, err)
	require.NoError(t, resp.Responses["A"].Error)
	require.NoError(t, resp.Responses["B"].Error)
	require.Positive(t, prom.openConns(), "keep-alive connections to Prometheus are open after a query")
	require.Positive(t, agent.openConns(), "and to the agent")

	var _ instancemgmt.InstanceDisposer = d
	d.Dispose()
	require.Eventually(t, func() bool { return prom.openConns() == 0 && agent.openConns() == 0 }, 5*time.Second, 20*time.Millisecond,
		"connections left open after Dispose: Prometheus %d, agent %d", prom.openConns(), agent.openConns())
	// Polled here, not with require.Eventually, whose own goroutines would count.
	if !settled(func() bool { return runtime.NumGoroutine() <= baseline }) {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatalf("goroutines: %d after Dispose, %d before the instance", runtime.NumGoroutine(), baseline)
	}
}

// TestDisposeEndsInFlightWork: a query still waiting on Prometheus when the
// instance is disposed ends with a message naming the settings change.
func TestDisposeEndsInFlightWork(t *testing.T) {
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	prom := newConnCounter(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/query_range") {
			// Reading the (POST) body lets the server notice a closed connection.
			_ = r.ParseForm()
			started <- struct{}{}
			select { // a Prometheus that never answers
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		emptyPrometheus(w, r)
	})
	t.Cleanup(func() { close(release) })
	ds := settings(prom.URL, `{"queryTimeout":"60s"}`)
	d := newInstance(t, ds)
	done := make(chan *backend.QueryDataResponse, 1)
	go func() {
		resp, _ := d.QueryData(context.Background(), queryReq(ds, `{"queryType":"queue"}`))
		done <- resp
	}()
	<-started
	d.Dispose()
	var resp *backend.QueryDataResponse
	require.Eventually(t, func() bool {
		select {
		case resp = <-done:
			return true
		default:
			return false
		}
	}, 10*time.Second, 20*time.Millisecond, "the in-flight query outlived Dispose")
	require.ErrorContains(t, resp.Responses["A"].Error, "settings changed")
	require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["A"].ErrorSource)
	require.Eventually(t, func() bool { return prom.openConns() == 0 }, 5*time.Second, 20*time.Millisecond, "open: %d", prom.openConns())

	resp, err := d.QueryData(context.Background(), queryReq(ds, `{"queryType":"queue"}`))
	require.NoError(t, err)
	require.ErrorContains(t, resp.Responses["A"].Error, "settings changed", "a disposed instance answers, it does not panic")
}

// TestInstancesCountInTheMemoryLimit: each data-source instance counts in
// the process's memory limit from its creation to its Dispose, invalid
// settings included (Grafana keeps and disposes those too), so a Grafana
// with more vLLM data sources than the limit's base gets room for each
// one's cache.
func TestInstancesCountInTheMemoryLimit(t *testing.T) {
	before := memlimit.Live()
	ok := newInstance(t, settings("http://127.0.0.1:1", `{}`))
	bad := newInstance(t, settings("http://127.0.0.1:1", `{"queryTimeout":"never"}`))
	require.Equal(t, before+2, memlimit.Live())
	ok.Dispose()
	bad.Dispose()
	require.Equal(t, before, memlimit.Live())
}
