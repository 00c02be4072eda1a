package grafanahost

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// Profiling returns the environment that turns on the SDK's pprof server in
// the plugin (Grafana's GF_PLUGIN_PROFILING_* variables) on a free port, and
// that port's address, for Stats.
func Profiling(t testing.TB) (env []string, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return []string{"GF_PLUGIN_PROFILING_ENABLED=true", "GF_PLUGIN_PROFILING_PORT=" + port}, "127.0.0.1:" + port
}

var (
	goroutinesRE = regexp.MustCompile(`goroutine profile: total (\d+)`)
	heapRE       = regexp.MustCompile(`# HeapAlloc = (\d+)`)
	countRE      = regexp.MustCompile(`(?m)^(\d+) @`)
)

// Usage is what the plugin process holds.
type Usage struct {
	// Goroutines counts every goroutine.
	Goroutines int
	// Pooled counts the keep-alive connections the process's HTTP
	// transports hold (each runs a read and a write loop: two of
	// Goroutines). Their number is bounded by the transport's idle limits and
	// by how many requests ran at once, not by how long the process has run,
	// so a leak check leaves them out and bounds them on their own.
	Pooled int
	// Heap is the heap in use after a garbage collection, in bytes.
	Heap uint64
}

// Stats reads the plugin process's goroutines and its heap in use after a
// garbage collection, from the pprof server Profiling turned on.
func Stats(addr string) (Usage, error) {
	g, err := fetch("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return Usage{}, err
	}
	h, err := fetch("http://" + addr + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return Usage{}, err
	}
	gm, hm := goroutinesRE.FindStringSubmatch(g), heapRE.FindStringSubmatch(h)
	if gm == nil || hm == nil {
		return Usage{}, fmt.Errorf("unexpected pprof output")
	}
	var u Usage
	u.Goroutines, _ = strconv.Atoi(gm[1])
	u.Heap, _ = strconv.ParseUint(hm[1], 10, 64)
	u.Pooled = pooledConnections(g)
	return u, nil
}

// pooledConnections counts the goroutines of a debug=1 goroutine profile
// (blocks of "N @ addresses" and their frames, one blank line apart) that
// run net/http's per-connection read loop: one per open connection.
func pooledConnections(profile string) int {
	n := 0
	for _, block := range strings.Split(profile, "\n\n") {
		m := countRE.FindStringSubmatch(block)
		if m == nil || !strings.Contains(block, "net/http.(*persistConn).readLoop") {
			continue
		}
		c, _ := strconv.Atoi(m[1])
		n += c
	}
	return n
}

func fetch(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TryQueryData is QueryData for goroutines other than the test's: it
// returns the gRPC error instead of failing the test.
func (h *Host) TryQueryData(ctx context.Context, ds backend.DataSourceInstanceSettings, queries ...backend.DataQuery) (*backend.QueryDataResponse, error) {
	req := &backend.QueryDataRequest{PluginContext: h.PluginContext(ds), Queries: queries}
	resp, err := h.data.QueryData(ctx, backend.ToProto().QueryDataRequest(req))
	if err != nil {
		return nil, err
	}
	return backend.FromProto().QueryDataResponse(resp)
}
