package health_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rejectFleet is a Prometheus with two engines reporting now that answers
// the rejection check (vllm.Builder.RejectingServers over 5m, byte for byte)
// with rejecting, and counts how often it was asked.
type rejectFleet struct {
	names     []string
	rejecting map[string]float64 // server → refused/s
	failWith  error
	asked     *int
}

func (rejectFleet) Host() string { return "prom:9090" }

func (rejectFleet) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (f rejectFleet) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return f.names, nil
}

func (f rejectFleet) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	var v model.Vector
	if expr == vllm.ForSettings(rejectSettings).RejectingServers(5*time.Minute) {
		*f.asked++
		if f.failWith != nil {
			return nil, nil, f.failWith
		}
		for inst, r := range f.rejecting {
			v = append(v, &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), "model_name": "m"}, Value: model.SampleValue(r)})
		}
		return v, nil, nil
	}
	for _, sig := range vllm.ForSettings(rejectSettings).HealthStallSignals(models.Filters{}, 3*time.Minute) {
		if expr == sig.Expr {
			return nil, nil, nil // nothing stalled, nothing asleep
		}
	}
	for _, inst := range []string{"a:8000", "b:8000"} {
		v = append(v, &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), "engine": "0", "model_name": "m"}, Value: 1})
	}
	return v, nil, nil
}

var rejectSettings = models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", ScrapeInterval: 15 * time.Second}

// TestRejectingServersLine: Save & test warns, staying green, with each
// server that refused requests at its queue limits over the last 5
// minutes and its rate; a fleet without the counter is not asked, and a
// fleet that refused nothing or a failed check says nothing.
func TestRejectingServersLine(t *testing.T) {
	older := []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}
	v032 := append([]string{"vllm:admission_rejections_total"}, older...)
	tests := []struct {
		name      string
		names     []string
		rejecting map[string]float64
		failWith  error
		asked     int
		contains  string
	}{
		{"older fleet: not asked", older, map[string]float64{"a:8000": 3}, nil, 0, ""},
		{"0.32 fleet refusing nothing", v032, nil, nil, 1, ""},
		{"two servers refusing", v032, map[string]float64{"b:8000": 0.5, "a:8000": 12.345}, nil, 1,
			"serving 1 model. Warning: 2 server(s) refused requests at their queue limit (--max-num-queued-reqs / --max-num-queued-tokens, HTTP 503) over the last 5m: a:8000 12.35/s, b:8000 0.50/s; add replicas or raise the limits"},
		{"a failed check says nothing", v032, map[string]float64{"a:8000": 1}, errors.New("boom"), 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			f := rejectFleet{names: tt.names, rejecting: tt.rejecting, failWith: tt.failWith, asked: &asked}
			res := health.Check(context.Background(), f, rejectSettings, time.Now())
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Equal(t, tt.asked, asked)
			if tt.contains == "" {
				require.NotContains(t, res.Message, "refused")
				return
			}
			require.Contains(t, res.Message, tt.contains)
		})
	}
}
