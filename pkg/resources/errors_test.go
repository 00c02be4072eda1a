package resources

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/failure/failuretest"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestRouteErrors: a lookup that fails with an error of each kind answers
// with the kind's resource status from the one error map, the error in
// the body, and records the kind's error source. The statuses are pinned
// here too, since the browser reads them: Prometheus refusing our
// credentials is a gateway error, never a 401 the browser would take for
// its own session; our bugs are 500 (they were 502 before the map).
func TestRouteErrors(t *testing.T) {
	want := map[failure.Kind]int{
		failure.InvalidInput: http.StatusBadRequest,
		failure.Canceled:     http.StatusBadRequest,
		failure.Timeout:      http.StatusGatewayTimeout,
		failure.Unreachable:  http.StatusBadGateway,
		failure.Unauthorized: http.StatusBadGateway,
		failure.Server:       http.StatusBadGateway,
		failure.BadResponse:  http.StatusBadGateway,
		failure.BadQuery:     http.StatusInternalServerError,
		failure.Internal:     http.StatusInternalServerError,
	}
	require.Len(t, want, len(failure.Kinds()))
	for kind, err := range failuretest.Examples() {
		for _, path := range []string{"/models", "/engines?instance=a"} {
			t.Run(string(kind)+" "+path, func(t *testing.T) {
				h := &Handler{Prom: &fakeProm{err: err}, Settings: models.Settings{InstanceLabel: "pod", MetricPrefix: "vllm:"}, Now: time.Now}
				ctx := failuretest.Context()
				rec := httptest.NewRecorder()
				h.Mux().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx))
				require.Equal(t, want[kind], rec.Code, rec.Body.String())
				require.Equal(t, failure.Of(kind).HTTPStatus(), rec.Code)
				var body map[string]string
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
				require.Equal(t, err.Error(), body["error"])
				require.Equal(t, failure.Of(kind).Source, backend.ErrorSourceFromContext(ctx))
			})
		}
	}
}
