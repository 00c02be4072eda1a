package query_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// fakePrometheus answers the HTTP API with canned bodies, for the error
// paths a real Prometheus cannot be made to take on demand.
func fakePrometheus(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func fakeExecutor(t *testing.T, url, timeout string) *query.Executor {
	s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(`{"queryTimeout":"` + timeout + `"}`)})
	require.NoError(t, err)
	c, err := prom.New(prom.Options{URL: s.URL, Timeout: s.QueryTimeout})
	require.NoError(t, err)
	return &query.Executor{Prom: c, Settings: s, Detector: query.NewDetector(c, s.MetricPrefix, time.Now)}
}

const emptyMatrix = `{"status":"success","data":{"resultType":"matrix","result":[]}}`

func TestExecutorErrorPaths(t *testing.T) {
	tests := []struct {
		name       string
		url        string
		wantStatus backend.Status
		wantSource backend.ErrorSource
		wantMsg    string
	}{
		{name: "down", url: promtest.ClosedURL(t), wantStatus: backend.StatusBadGateway, wantSource: backend.ErrorSourceDownstream, wantMsg: "unreachable"},
		{name: "slow", url: fakePrometheus(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}), wantStatus: backend.StatusTimeout, wantSource: backend.ErrorSourceDownstream, wantMsg: "timeout"},
		{name: "garbage", url: fakePrometheus(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[["x","y"]]}]}}`))
		}), wantStatus: backend.StatusBadGateway, wantSource: backend.ErrorSourceDownstream, wantMsg: "bad response"},
		{name: "5xx", url: fakePrometheus(t, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
		}), wantStatus: backend.StatusBadGateway, wantSource: backend.ErrorSourceDownstream, wantMsg: "upstream overloaded"},
		{name: "credentials", url: fakePrometheus(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
		}), wantStatus: backend.StatusUnauthorized, wantSource: backend.ErrorSourceDownstream, wantMsg: "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := fakeExecutor(t, tt.url, "300ms")
			now := time.Now()
			resp := run(t, e,
				dq("A", `{"queryType":"queue"}`, now.Add(-time.Hour), now),
				dq("B", `{"queryType":"topk"}`, now.Add(-time.Hour), now),
				dq("C", `{"queryType":"waitTime","quantiles":[2]}`, now.Add(-time.Hour), now),
			)
			for _, ref := range []string{"A", "B"} {
				r := resp.Responses[ref]
				require.Error(t, r.Error, ref)
				require.Equal(t, tt.wantStatus, r.Status, "%s: %v", ref, r.Error)
				require.Equal(t, tt.wantSource, r.ErrorSource, ref)
				require.Contains(t, r.Error.Error(), tt.wantMsg, ref)
				require.Contains(t, r.Error.Error(), "query "+ref+":")
			}
			require.ErrorContains(t, resp.Responses["C"].Error, "quantile 2 is out of range", "validation errors win over the dead server")
		})
	}
}

func TestExecutorFetchesIdenticalPromQLOnce(t *testing.T) {
	var ranges atomic.Int64
	var mu sync.Mutex
	perExpr := map[string]int{}
	url := fakePrometheus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/query_range") {
			ranges.Add(1)
			_ = r.ParseForm()
			mu.Lock()
			perExpr[r.Form.Get("query")]++
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // let the duplicates overlap
		}
		if strings.Contains(r.URL.Path, "/label/") {
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running"]}`))
			return
		}
		_, _ = w.Write([]byte(emptyMatrix))
	})
	e := fakeExecutor(t, url, "5s")
	now := time.Now()
	var qs []backend.DataQuery
	for _, ref := range []string{"A", "B", "C", "D"} {
		qs = append(qs, dq(ref, `{"queryType":"queue","legend":"`+ref+`"}`, now.Add(-time.Hour), now))
	}
	qs = append(qs, dq("E", `{"queryType":"queue","grouping":"model"}`, now.Add(-time.Hour), now))
	resp := run(t, e, qs...)
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
		require.Len(t, r.Frames, 1, "an empty result is one empty frame")
		require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "num_requests_waiting")
	}
	// queue runs running and waiting as two plain expressions (the fleet
	// has no optional signals), so two distinct queries are four.
	require.Equal(t, int64(4), ranges.Load(), "four identical queries and one different: each expression once")
	require.Len(t, perExpr, 4)
	for expr, n := range perExpr {
		require.Equal(t, 1, n, expr)
	}
}

func TestExecutorHugeRange(t *testing.T) {
	var step atomic.Value
	url := fakePrometheus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = r.ParseForm()
		if s := r.Form.Get("step"); s != "" {
			step.Store(s)
		}
		_, _ = w.Write([]byte(emptyMatrix))
	})
	e := fakeExecutor(t, url, "5s")
	now := time.Now()
	q := dq("A", `{"queryType":"queue"}`, now.AddDate(-50, 0, 0), now)
	q.MaxDataPoints = 1_000_000_000
	r := run(t, e, q).Responses["A"]
	require.NoError(t, r.Error)
	require.NotEmpty(t, r.Frames[0].Meta.Notices, "the clamped step is announced")
	require.Contains(t, r.Frames[0].Meta.Notices[0].Text, "11,000 points")
	require.NotNil(t, step.Load())
}
