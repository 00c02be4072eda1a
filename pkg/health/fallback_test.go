package health_test

import (
	"context"
	"encoding/json"
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

// namesOnly is a Prometheus that has vLLM names but none of the names that
// mark a generation, and the given running-requests series.
type namesOnly struct {
	names  []string
	series []model.Metric
	// asked receives the time range of the name lookup, when set.
	asked *[2]time.Time
}

func (namesOnly) Host() string { return "prom:9090" }

func (namesOnly) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (p namesOnly) MetricNames(_ context.Context, sel string, start, end time.Time) ([]string, error) {
	if strings.Contains(sel, "engine:") { // the recording-rule lookup: none recorded
		return nil, nil
	}
	if p.asked != nil {
		*p.asked = [2]time.Time{start, end}
	}
	return p.names, nil
}

func (p namesOnly) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	var v model.Vector
	if strings.Contains(expr, "engine_sleep_state") || isScrapeHealth(expr) { // the stall check: none stalled or asleep
		return v, nil, nil
	}
	for _, m := range p.series {
		v = append(v, &model.Sample{Metric: m, Value: 1})
	}
	return v, nil, nil
}

// TestGenerationFallback: when the names alone cannot tell V1 from V0 (only
// names both generations share), the engine label decides: only V1 engines
// carry it.
func TestGenerationFallback(t *testing.T) {
	shared := []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:num_preemptions_total"}
	tests := []struct {
		name    string
		series  []model.Metric
		want    string
		message string
	}{
		{name: "engine label means V1", want: "V1", message: "vLLM V1 metrics found: 2 engines on 1 instance serving 1 model",
			series: []model.Metric{
				{"instance": "a:8000", "engine": "0", "model_name": "m"},
				{"instance": "a:8000", "engine": "1", "model_name": "m"},
			}},
		{name: "no engine label means V0", want: "V0", message: "vLLM V0 metrics found: 2 engines on 2 instances serving 1 model",
			series: []model.Metric{
				{"instance": "a:8000", "model_name": "m"},
				{"instance": "b:8000", "model_name": "m"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}
			res := health.Check(context.Background(), namesOnly{names: shared, series: tt.series}, s, time.Now())
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Equal(t, "Prometheus 2.42.0: "+tt.message, res.Message)
			var d struct {
				Generation string `json:"generation"`
			}
			require.NoError(t, json.Unmarshal(res.JSONDetails, &d))
			require.Equal(t, tt.want, d.Generation)
		})
	}
}

// TestCheckLooksBackOneHour: the metric-name lookup covers the hour before
// the check, so a fleet that scraped recently is found and a huge TSDB is
// not searched whole.
func TestCheckLooksBackOneHour(t *testing.T) {
	var asked [2]time.Time
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := namesOnly{names: []string{"vllm:kv_cache_usage_perc"}, series: []model.Metric{{"instance": "a", "engine": "0", "model_name": "m"}}, asked: &asked}
	res := health.Check(context.Background(), p, models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}, now)
	require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
	require.Equal(t, [2]time.Time{now.Add(-time.Hour), now}, asked)
}
