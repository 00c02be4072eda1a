package prom

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/stretchr/testify/require"
)

func TestForwardingHeaders(t *testing.T) {
	in := http.Header{
		"Authorization":    {"Bearer user-token"},
		"X-Id-Token":       {"id-token"},
		"Cookie":           {"grafana_session=SESSION; team=a; other=x", "sso=abc"},
		"X-Grafana-Org-Id": {"1"},
	}
	tests := []struct {
		name string
		f    Forwarding
		in   http.Header
		want http.Header
	}{
		{name: "off forwards nothing", f: Forwarding{}, in: in, want: nil},
		{name: "oauth forwards both tokens, no cookies", f: Forwarding{OAuth: true}, in: in,
			want: http.Header{"Authorization": {"Bearer user-token"}, "X-Id-Token": {"id-token"}}},
		{name: "oauth without a signed-in token forwards nothing", f: Forwarding{OAuth: true},
			in: http.Header{"Cookie": {"team=a"}}, want: nil},
		{name: "cookies filtered to the allowed names", f: Forwarding{Cookies: []string{"team", "sso", "absent"}}, in: in,
			want: http.Header{"Cookie": {"team=a; sso=abc"}}},
		{name: "no allowed cookie present", f: Forwarding{Cookies: []string{"absent"}}, in: in, want: nil},
		{name: "malformed cookie header forwards nothing from it", f: Forwarding{Cookies: []string{"team"}},
			in: http.Header{"Cookie": {"team=a; =broken\x7f"}}, want: nil},
		{name: "both", f: Forwarding{OAuth: true, Cookies: []string{"team"}}, in: in,
			want: http.Header{"Authorization": {"Bearer user-token"}, "X-Id-Token": {"id-token"}, "Cookie": {"team=a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.f.Headers(tt.in))
		})
	}
}

func TestIdentityKey(t *testing.T) {
	a := http.Header{"Authorization": {"Bearer a"}}
	b := http.Header{"Authorization": {"Bearer b"}}
	require.Empty(t, IdentityKey(nil))
	require.Equal(t, IdentityKey(a), IdentityKey(a.Clone()))
	require.NotEqual(t, IdentityKey(a), IdentityKey(b))
	require.NotEqual(t, IdentityKey(http.Header{"Authorization": {"x"}, "Cookie": {"y"}}),
		IdentityKey(http.Header{"Authorization": {"x\x00Cookie\x00y"}}), "parts cannot run together")
	require.NotContains(t, IdentityKey(a), "Bearer")
	require.Len(t, IdentityKey(a), 64)
}

// TestForwardedHeadersReachPrometheus checks every kind of request the
// client makes (streamed queries, client_golang's API calls, the store
// list) carries exactly the context's forwarded headers.
func TestForwardedHeadersReachPrometheus(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]http.Header{}
	c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		if strings.Contains(r.URL.String(), "u1") {
			t.Errorf("a forwarded value in the URL %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/query_range"):
			_, _ = w.Write(matrixJSON(1, 1))
		case strings.HasSuffix(r.URL.Path, "/query"):
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		default:
			_, _ = w.Write([]byte(`{"status":"success","data":[]}`))
		}
	}, Options{})
	calls := func(ctx context.Context) {
		_, _, err := c.QueryRange(ctx, "up", testRange())
		require.NoError(t, err)
		_, _, err = c.Query(ctx, "up", time.Time{})
		require.NoError(t, err)
		_, err = c.LabelValues(ctx, "job", "up", time.Unix(0, 0), time.Unix(60, 0))
		require.NoError(t, err)
		_, _, _ = c.Stores(ctx)
	}
	tests := []struct {
		name string
		fwd  http.Header
	}{
		{name: "none", fwd: nil},
		{name: "token and cookie", fwd: http.Header{"Authorization": {"Bearer u1"}, "X-Id-Token": {"id1"}, "Cookie": {"team=a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			calls(WithForwarded(context.Background(), tt.fwd))
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, seen, 4)
			for p, h := range seen {
				for _, k := range []string{"Authorization", "X-Id-Token", "Cookie"} {
					require.Equal(t, tt.fwd.Values(k), h.Values(k), "%s on %s", k, p)
				}
			}
		})
	}
}

// TestConfiguredAuthWinsOverForwarded: a data source with basic auth
// configured keeps sending it, as with the SDK's own forwarding.
func TestConfiguredAuthWinsOverForwarded(t *testing.T) {
	got := make(chan string, 1)
	c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		_, _ = w.Write(matrixJSON(1, 1))
	}, Options{HTTP: httpclient.Options{BasicAuth: &httpclient.BasicAuthOptions{User: "u", Password: "p"}}})
	ctx := WithForwarded(context.Background(), http.Header{"Authorization": {"Bearer user"}})
	_, _, err := c.QueryRange(ctx, "up", testRange())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(<-got, "Basic "))
}

// TestForwardedValuesStayOutOfErrors: a server that rejects the user's
// token and quotes nothing gets an error without the token in it.
func TestForwardedValuesStayOutOfErrors(t *testing.T) {
	c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}, Options{})
	ctx := WithForwarded(context.Background(), http.Header{"Authorization": {"Bearer tok-123456"}})
	_, _, err := c.QueryRange(ctx, "up", testRange())
	require.Equal(t, KindUnauthorized, KindOf(err))
	require.NotContains(t, err.Error(), "tok-123456")
	_, err = c.LabelValues(ctx, "job", "up", time.Unix(0, 0), time.Unix(60, 0))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "tok-123456")
}
