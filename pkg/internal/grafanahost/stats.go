package grafanahost

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
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
)

// Stats reads the plugin process's goroutine count and its heap in use
// after a garbage collection, from the pprof server Profiling turned on.
func Stats(addr string) (goroutines int, heap uint64, err error) {
	g, err := fetch("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, 0, err
	}
	h, err := fetch("http://" + addr + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, 0, err
	}
	gm, hm := goroutinesRE.FindStringSubmatch(g), heapRE.FindStringSubmatch(h)
	if gm == nil || hm == nil {
		return 0, 0, fmt.Errorf("unexpected pprof output")
	}
	goroutines, _ = strconv.Atoi(gm[1])
	heap, _ = strconv.ParseUint(hm[1], 10, 64)
	return goroutines, heap, nil
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
