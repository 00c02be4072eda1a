package resources

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// fakeProm records the label and selector asked for. Route logic is unit
// tested here; the host test runs the routes against real Prometheus.
type fakeProm struct {
	label, selector string
	vals            []string
	err             error
}

func (f *fakeProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

func (f *fakeProm) LabelValues(_ context.Context, label, selector string, _, _ time.Time) ([]string, error) {
	f.label, f.selector = label, selector
	return f.vals, f.err
}

func TestRoutes(t *testing.T) {
	tests := []struct {
		name, method, path string
		vals               []string
		err                error
		wantStatus         int
		wantLabel, wantSel string
		wantBody           string
	}{
		{name: "models", method: "GET", path: "/models", vals: []string{"b", "a"}, wantStatus: 200, wantLabel: "model_name", wantSel: "vllm:num_requests_running", wantBody: `["a","b"]`},
		{name: "instances of a model", method: "GET", path: "/instances?model=a%22b", vals: nil, wantStatus: 200, wantLabel: "pod", wantSel: `vllm:num_requests_running{model_name="a\"b"}`, wantBody: `[]`},
		{name: "engines", method: "GET", path: "/engines?instance=x&instance=y&model=", vals: []string{"1", "0"}, wantStatus: 200, wantLabel: "engine", wantSel: `vllm:num_requests_running{pod=~"x|y"}`, wantBody: `["0","1"]`},
		{name: "clusters", method: "GET", path: "/clusters", vals: []string{"us-1", "eu-1"}, wantStatus: 200, wantLabel: "cluster", wantSel: "vllm:num_requests_running", wantBody: `["eu-1","us-1"]`},
		{name: "namespaces of a fleet without the label", method: "GET", path: "/namespaces", vals: nil, wantStatus: 200, wantLabel: "namespace", wantSel: "vllm:num_requests_running", wantBody: `[]`},
		{name: "prometheus down", method: "GET", path: "/models", err: &prom.Error{Kind: prom.KindUnreachable, Err: errors.New("refused")}, wantStatus: 502},
		{name: "timeout", method: "GET", path: "/models", err: &prom.Error{Kind: prom.KindTimeout, Err: errors.New("slow")}, wantStatus: 504},
		{name: "not a route", method: "GET", path: "/api/v1/query?query=up", wantStatus: 404},
		{name: "no writes", method: "POST", path: "/models", wantStatus: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &fakeProm{vals: tt.vals, err: tt.err}
			h := &Handler{Prom: fp, Settings: models.Settings{InstanceLabel: "pod", MetricPrefix: "vllm:"}, Now: time.Now}
			rec := httptest.NewRecorder()
			h.Mux().ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			require.Equal(t, tt.wantStatus, rec.Code, rec.Body.String())
			if tt.wantLabel != "" {
				require.Equal(t, tt.wantLabel, fp.label)
				require.Equal(t, tt.wantSel, fp.selector)
			}
			if tt.wantBody != "" {
				require.JSONEq(t, tt.wantBody, rec.Body.String())
			}
			if tt.wantStatus >= 500 {
				var body map[string]string
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
				require.NotEmpty(t, body["error"])
			}
		})
	}
}
