package health_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// Error paths use httptest fakes: a real Prometheus cannot be made to
// reject credentials or answer garbage on demand.
func TestCheckErrorPaths(t *testing.T) {
	fake := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name string
		url  string
		json string
		want string
	}{
		{name: "unreachable", url: promtest.ClosedURL(t), want: "is unreachable"},
		{name: "credentials rejected", url: fake(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		}), want: "rejected the credentials"},
		{name: "forbidden", url: fake(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "nope", http.StatusForbidden)
		}), want: "rejected the credentials"},
		{name: "slow", json: `{"queryTimeout":"200ms"}`, url: fake(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}), want: "did not answer within the query timeout"},
		{name: "garbage", url: fake(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("<html>not prometheus</html>"))
		}), want: "listing metric names failed"},
		{name: "5xx html", url: fake(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>bad gateway</html>\nmore"))
		}), want: "listing metric names failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := tt.json
			if js == "" {
				js = `{}`
			}
			res := check(t, tt.url, js)
			require.Equal(t, backend.HealthStatusError, res.Status)
			require.Contains(t, res.Message, tt.want)
		})
	}
}
