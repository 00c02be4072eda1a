package prom

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStores reads Thanos Query's store list (its shape as v0.42 writes
// it) and treats every other answer as "no store list", never an error.
func TestStores(t *testing.T) {
	thanos := `{"status":"success","data":{
		"sidecar":[{"name":"10.0.0.2:10901","lastCheck":"2026-12-02T01:00:00Z","lastError":"rpc error: code = Unavailable","labelSets":[],"minTime":0,"maxTime":1},
		           {"name":"10.0.0.1:10901","lastCheck":"2026-12-02T01:00:00Z","lastError":null,"labelSets":[],"minTime":0,"maxTime":1}],
		"store":[{"name":"10.0.0.3:10901","lastError":null}]}}`
	tests := []struct {
		name   string
		status int
		body   string
		want   []StoreStatus
		ok     bool
	}{
		{"thanos query", 200, thanos, []StoreStatus{
			{Name: "10.0.0.1:10901", Type: "sidecar"},
			{Name: "10.0.0.2:10901", Type: "sidecar", LastError: "rpc error: code = Unavailable"},
			{Name: "10.0.0.3:10901", Type: "store"},
		}, true},
		{"prometheus has no such path", 404, `404 page not found`, nil, false},
		{"an error page with 200", 200, `<html>not json</html>`, nil, false},
		{"an API error", 200, `{"status":"error","error":"unknown"}`, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "/api/v1/stores", r.URL.Path)
				require.Equal(t, http.MethodGet, r.Method)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}, Options{})
			got, ok, err := c.Stores(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
	t.Run("an unreachable server is an error", func(t *testing.T) {
		c, err := New(Options{URL: "http://127.0.0.1:1"})
		require.NoError(t, err)
		_, ok, err := c.Stores(context.Background())
		require.Error(t, err)
		require.False(t, ok)
	})
}

func TestStoreStatusString(t *testing.T) {
	require.Equal(t, "a:1 (sidecar)", StoreStatus{Name: "a:1", Type: "sidecar"}.String())
	require.Equal(t, "a:1", StoreStatus{Name: "a:1"}.String())
}
