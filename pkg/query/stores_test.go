package query_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// storesServer answers range queries with one empty series list (warning
// with warn when set) and /api/v1/stores with stores, or 404 when "";
// it counts the store-list calls.
func storesServer(t *testing.T, stores, warn string, calls *atomic.Int32) string {
	return fakePrometheus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/v1/stores":
			calls.Add(1)
			if stores == "" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(stores))
		case r.URL.Path == "/api/v1/query_range":
			_, _ = w.Write([]byte(`{"status":"success","warnings":[` + warn + `],"data":{"resultType":"matrix","result":[]}}`))
		default:
			_, _ = w.Write([]byte(`{"status":"success","data":[]}`))
		}
	})
}

const oneStoreDown = `{"status":"success","data":{"sidecar":[
	{"name":"10.0.0.1:10901","lastError":null},
	{"name":"10.0.0.2:10901","lastError":"rpc error: code = Unavailable desc = connection refused"}]}}`

// TestStoreNotices: a store Thanos Query marked down is named on every
// query that answered (not on one that failed), once, even when Thanos'
// own warning already named it; a server without a store list is asked
// once, not on every request.
func TestStoreNotices(t *testing.T) {
	to := time.Now()
	from := to.Add(-time.Hour)
	tests := []struct {
		name, stores, warn string
		want               int // notices naming the down store on the answered query
	}{
		{"thanos with a store down", oneStoreDown, "", 1},
		{"thanos' own warning named it", oneStoreDown, `"partial response: store 10.0.0.2:10901 failed"`, 1},
		{"every store up", `{"status":"success","data":{"sidecar":[{"name":"10.0.0.1:10901","lastError":null}]}}`, "", 0},
		{"prometheus", "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			e := fakeExecutor(t, storesServer(t, tc.stores, tc.warn, &calls), "5s")
			resp := run(t, e, dq("A", `{"queryType":"promql","expr":"up"}`, from, to), dq("B", `{"queryType":"topk","k":0}`, from, to))
			require.Error(t, resp.Responses["B"].Error, "an invalid query still fails on its own")
			a := resp.Responses["A"]
			require.NoError(t, a.Error)
			require.Equal(t, tc.want, strings.Count(noticeTexts(a.Frames), "10.0.0.2:10901"), noticeTexts(a.Frames))
			require.NotContains(t, noticeTexts(a.Frames), "10.0.0.1:10901", "a store that answers is never named")
			if tc.warn != "" {
				require.Contains(t, noticeTexts(a.Frames), "partial response", "Thanos' own words stay")
				require.NotContains(t, noticeTexts(a.Frames), "cannot reach store", "and are not repeated")
			}
			run(t, e, dq("A", `{"queryType":"promql","expr":"up"}`, from, to))
			if tc.stores == "" {
				require.Equal(t, int32(1), calls.Load(), "a server without a store list is asked once")
			} else {
				require.Equal(t, int32(2), calls.Load(), "thanos is asked after every request")
			}
		})
	}
}
