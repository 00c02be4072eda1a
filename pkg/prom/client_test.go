package prom

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

func testClient(t *testing.T, h http.HandlerFunc, opts Options) *Client {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts.URL = srv.URL
	c, err := New(opts)
	require.NoError(t, err)
	return c
}

func testRange() v1.Range {
	end := time.Unix(1_700_000_000, 0)
	return v1.Range{Start: end.Add(-time.Hour), End: end, Step: 15 * time.Second}
}

// TestQueryRangeStatus checks that the streaming path classifies answers
// as the client_golang path did (the executor's tests pin the messages).
func TestQueryRangeStatus(t *testing.T) {
	tests := []struct {
		name     string
		h        http.HandlerFunc
		maxBody  int64
		wantKind ErrorKind
		wantMsg  string
		points   int
	}{
		{name: "success", h: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(matrixJSON(2, 3))
		}, points: 6},
		{name: "POST refused, GET answers", h: func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			if r.URL.Query().Get("query") != "up" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = w.Write(matrixJSON(1, 4))
		}, points: 4},
		{name: "bad query", h: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:3: parse error"}`))
		}, wantKind: KindBadQuery, wantMsg: "parse error"},
		{name: "execution timeout", h: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`))
		}, wantKind: KindTimeout, wantMsg: "timed out"},
		{name: "an execution error the query caused", h: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"execution","error":"found duplicate series for the match group"}`))
		}, wantKind: KindBadQuery, wantMsg: "duplicate series"},
		{name: "a store that failed while the query ran (Thanos without partial response)", h: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"execution","error":"expanding series: proxy Series(): fetch series for {shard=\"1\"} Addr: 127.0.0.1:10901: rpc error: code = Unavailable"}`))
		}, wantKind: KindServer, wantMsg: "Addr: 127.0.0.1:10901"},
		{name: "proxy 502 in text", h: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad gateway\nmore", http.StatusBadGateway)
		}, wantKind: KindServer, wantMsg: "bad gateway"},
		{name: "forbidden", h: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
		}, wantKind: KindUnauthorized, wantMsg: "credentials rejected"},
		{name: "a vector where a matrix belongs", h: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		}, wantKind: KindBadResponse, wantMsg: "expected a matrix"},
		{name: "over the size cap", h: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(matrixJSON(10, 100))
		}, maxBody: 1000, wantKind: KindBadResponse, wantMsg: "response larger than 1000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testClient(t, tt.h, Options{MaxBodyBytes: tt.maxBody})
			m, _, err := c.QueryRange(context.Background(), "up", testRange())
			if tt.wantKind != "" {
				require.Error(t, err)
				require.Equal(t, tt.wantKind, KindOf(err), err.Error())
				require.Contains(t, err.Error(), tt.wantMsg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.points, m.Points())
		})
	}
}

// TestConcurrencyCap: with every slot busy, a request waits, and gives up
// when its context ends, without ever reaching Prometheus.
func TestConcurrencyCap(t *testing.T) {
	var inFlight, peak, served atomic.Int32
	release := make(chan struct{})
	c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		served.Add(1)
		<-release
		_, _ = w.Write(matrixJSON(1, 1))
	}, Options{MaxConcurrent: 2})

	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, _, err := c.QueryRange(context.Background(), "up", testRange())
			done <- err
		}()
	}
	require.Eventually(t, func() bool { return served.Load() == 2 }, 5*time.Second, 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := c.QueryRange(ctx, "up", testRange())
	require.Error(t, err)
	require.Equal(t, KindTimeout, KindOf(err))
	require.Contains(t, err.Error(), "waiting for one of 2 Prometheus request slots")
	require.Equal(t, int32(2), served.Load(), "the waiting request must not reach Prometheus")

	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, _, err = c.QueryRange(ctx2, "up", testRange())
	require.Equal(t, KindCanceled, KindOf(err))

	close(release)
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	require.Equal(t, int32(2), peak.Load())
	// The slots are free again.
	_, _, err = c.QueryRange(context.Background(), "up", testRange())
	require.NoError(t, err)
}

// TestQueryDecodesVectors: instant answers are decoded by the streaming
// reader into client_golang's Vector, exactly as client_golang did.
func TestQueryDecodesVectors(t *testing.T) {
	at := time.Unix(1_700_000_000, 250_000_000)
	tests := []struct {
		name     string
		body     string
		want     model.Vector
		wantWarn []string
		wantMsg  string
	}{
		{name: "vector", body: `{"status":"success","warnings":["w"],"data":{"resultType":"vector","result":[` +
			`{"metric":{"instance":"a:1","model_name":"m"},"value":[1700000000.25,"3.5"]},` +
			`{"metric":{},"value":[1700000000.25,"NaN"]},` +
			`{"metric":{"__name__":"h"},"histogram":[1700000000.25,{"count":"1","sum":"2"}]}]}}`,
			want: model.Vector{
				{Metric: model.Metric{"instance": "a:1", "model_name": "m"}, Value: 3.5, Timestamp: model.TimeFromUnixNano(at.UnixNano())},
				{Metric: model.Metric{}, Value: model.SampleValue(math.NaN()), Timestamp: model.TimeFromUnixNano(at.UnixNano())},
			}, wantWarn: []string{"w"}},
		{name: "empty vector", body: `{"status":"success","data":{"resultType":"vector","result":[]}}`, want: model.Vector{}},
		{name: "scalar", body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`, wantMsg: "expected a vector, got scalar"},
		{name: "string", body: `{"status":"success","data":{"resultType":"string","result":[1700000000,"x"]}}`, wantMsg: "expected a vector, got string"},
		{name: "matrix", body: string(matrixJSON(1, 2)), wantMsg: "expected a vector, got matrix"},
		{name: "garbage value", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}`, wantMsg: `value "x" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotTime string
			c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				gotTime = r.Form.Get("time")
				_, _ = w.Write([]byte(tt.body))
			}, Options{})
			v, warn, err := c.Query(context.Background(), "up", at)
			require.Equal(t, "1700000000.25", gotTime)
			if tt.wantMsg != "" {
				require.ErrorContains(t, err, tt.wantMsg)
				require.Equal(t, KindBadResponse, KindOf(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantWarn, warn)
			require.Len(t, v, len(tt.want))
			for i := range tt.want {
				require.Equal(t, tt.want[i].Metric, v[i].Metric)
				require.Equal(t, tt.want[i].Timestamp, v[i].Timestamp)
				if math.IsNaN(float64(tt.want[i].Value)) {
					require.True(t, math.IsNaN(float64(v[i].Value)))
				} else {
					require.Equal(t, tt.want[i].Value, v[i].Value)
				}
			}
		})
	}
}
