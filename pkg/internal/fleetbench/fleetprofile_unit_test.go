package fleetbench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestInstantStats checks the profile's reading of the query API's stats
// and its errors on answers that are not a success (httptest fakes: the
// error paths only; the bench itself reads a real Prometheus).
func TestInstantStats(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		wantErr    string
		eval       float64
		samples    int64
	}{
		{name: "stats", status: 200, eval: 0.25, samples: 815000,
			body: `{"status":"success","data":{"resultType":"vector","result":[],"stats":{"timings":{"evalTotalTime":0.25,"execTotalTime":0.3},"samples":{"totalQueryableSamples":815000,"peakSamples":12}}}}`},
		{name: "bad query", status: 400, wantErr: `HTTP 400: parse error`,
			body: `{"status":"error","errorType":"bad_data","error":"parse error"}`},
		{name: "not JSON", status: 502, wantErr: "HTTP 502, undecodable answer", body: `<html>bad gateway</html>`},
		{name: "error with 200", status: 200, wantErr: "HTTP 200: timeout", body: `{"status":"error","error":"timeout"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.NoError(t, r.ParseForm())
				require.Equal(t, "all", r.PostForm.Get("stats"), "stats asked for")
				require.Equal(t, "up", r.PostForm.Get("query"))
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			b := &tableBench{env: &env{prom: &promtest.Server{URL: srv.URL}, http: srv.Client()}}
			st, err := b.instantStats("up", time.Unix(1_700_000_000, 0))
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.eval, st.Data.Stats.Timings.EvalTotalTime)
			require.Equal(t, c.samples, st.Data.Stats.Samples.TotalQueryableSamples)
		})
	}
}

// TestRenderProfile checks the profile's shares and that a pipe in an
// expression cannot break the table's cells.
func TestRenderProfile(t *testing.T) {
	costs := []exprCost{
		{expr: `sum(rate(x{a=~"b|c"}[1m]))`, wall: 300 * time.Millisecond, eval: 0.3, samples: 40},
		{expr: "up", wall: 100 * time.Millisecond, eval: 0.1, samples: 5},
	}
	out := renderProfile("rules on", costs)
	require.Contains(t, out, "sum of evaluations 0.400 s")
	require.Contains(t, out, "| `sum(rate(x{a=~\"b\\|c\"}[1m]))` | 300 ms | 0.300 s | 75% | 40 |")
	require.Contains(t, out, "| `up` | 100 ms | 0.100 s | 25% | 5 |")
	long := strings.Repeat("a", 200) + strings.Repeat("z", 200)
	s := shorten(long, 110)
	require.Equal(t, strings.Repeat("a", 55)+" … "+strings.Repeat("z", 55), s)
}

// TestMemoryCells checks the crowd tables' memory bound: the heap at the
// start plus, per instance, the cache budget and the stated overhead.
func TestMemoryCells(t *testing.T) {
	start := uint64(6 << 20)
	require.Equal(t, start+3*(64<<20+8<<20), budgetBound(start, 3))
	require.Equal(t, start, budgetBound(start, 0), "no instance, no budget")
	ld := loadResult{heapOneGCMB: 241.2, heapAfterMB: 41.4, rssAfterMB: 120.2, rssQuietMB: 80.4, rssPeakMB: 230.6, instances: 2}
	require.Equal(t, "41 MiB of 150 MiB (2 instances; 241 MiB after one GC) | 120 MB | 80 MB | 231 MB", memoryCells(ld, start))
	require.Equal(t, memoryColumns, strings.Count(memoryHeader, "|")+1, "the separator rows count the header's columns")
}
