package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// podFleet is a Prometheus holding one Kubernetes vLLM pod; the stack
// lookups (the endpoint picker's names, the label shapes) fail on demand.
type podFleet struct{ namesErr, shapesErr error }

func (podFleet) Host() string { return "prom:9090" }

func (podFleet) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (p podFleet) MetricNames(_ context.Context, sel string, _, _ time.Time) ([]string, error) {
	if strings.Contains(sel, "inference_pool_") {
		return []string{"vllm:num_requests_running"}, p.namesErr
	}
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
}

func (p podFleet) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	if strings.Contains(expr, "ReplicaId") && p.shapesErr != nil {
		return nil, nil, p.shapesErr
	}
	if strings.Contains(expr, "engine_sleep_state") || isScrapeHealth(expr) { // the stall check: none stalled or asleep
		return nil, nil, nil
	}
	m := model.Metric{"namespace": "inference", "pod": "vllm-0", "instance": "10.0.0.7:8000", "engine": "0", "model_name": "m"}
	return model.Vector{&model.Sample{Metric: m, Value: 1}}, nil, nil
}

// TestStackLookupIsAdvice: the stack is named when its lookups answer,
// and left out (health still OK) when either fails.
func TestStackLookupIsAdvice(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name      string
		p         podFleet
		wantStack string
		wantNote  string
	}{
		{"named", podFleet{}, "Kubernetes", "set the profile of your stack"},
		{"names lookup fails", podFleet{namesErr: down}, "", ""},
		{"shapes lookup fails", podFleet{shapesErr: down}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}
			res := health.Check(context.Background(), tt.p, s, time.Now())
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			var d struct {
				Stack string `json:"stack"`
			}
			require.NoError(t, json.Unmarshal(res.JSONDetails, &d))
			require.Equal(t, tt.wantStack, d.Stack)
			if tt.wantNote == "" {
				require.NotContains(t, res.Message, "Stack:")
				return
			}
			require.Contains(t, res.Message, tt.wantNote)
		})
	}
}
