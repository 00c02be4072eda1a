package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// stallFleet is a Prometheus whose engines all report now; it answers the
// stall check's two expressions (those vllm.Builder.HealthStallSignals
// writes for the expected window, byte for byte) with the engines given,
// and every other expression with the whole fleet.
type stallFleet struct {
	engines  []string // instance names, one engine "0" each
	answers  map[string][]string
	failWith error
}

func (stallFleet) Host() string { return "prom:9090" }

func (stallFleet) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (stallFleet) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
}

func (f stallFleet) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	if isScrapeHealth(expr) {
		return nil, nil, nil
	}
	instances, isStall := f.answers[expr]
	if isStall && f.failWith != nil {
		return nil, nil, f.failWith
	}
	if !isStall {
		instances = f.engines
	}
	var v model.Vector
	for _, inst := range instances {
		m := model.Metric{"instance": model.LabelValue(inst), "engine": "0", "model_name": "m"}
		v = append(v, &model.Sample{Metric: m, Value: 1})
	}
	return v, nil, nil
}

// answering builds a fleet of n engines (a:8000, b:8000, …) whose stall
// check at window says stalled and sleeping.
func answering(n int, window time.Duration, s models.Settings, stalled, sleeping []string) stallFleet {
	f := stallFleet{answers: map[string][]string{}}
	for i := range n {
		f.engines = append(f.engines, fmt.Sprintf("%c:8000", 'a'+i))
	}
	for _, sig := range vllm.ForSettings(s).HealthStallSignals(models.Filters{}, window) {
		switch sig.Name {
		case vllm.FleetStalled:
			f.answers[sig.Expr] = stalled
		case vllm.FleetSleeping:
			f.answers[sig.Expr] = sleeping
		}
	}
	return f
}

// TestStalledEnginesLine: stalled engines are named in a warning that
// leaves health OK while some awake engine still moves, and turn it red
// when none does; sleeping engines are counted as information.
func TestStalledEnginesLine(t *testing.T) {
	base := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", ScrapeInterval: 15 * time.Second}
	with := func(w time.Duration) models.Settings { s := base; s.StallWindow = w; return s }
	tests := []struct {
		name      string
		settings  models.Settings
		window    time.Duration // the window the check must ask for
		engines   int
		stalled   []string
		sleeping  []string
		failWith  error
		status    backend.HealthStatus
		contains  []string
		absent    []string
		detailsSt int
		detailsSl int
	}{
		{name: "nothing stalled or asleep", settings: base, window: 3 * time.Minute, engines: 3,
			status: backend.HealthStatusOk, absent: []string{"stalled", "sleeping", "Could not"}},
		{name: "one of three stalled", settings: base, window: 3 * time.Minute, engines: 3, stalled: []string{"b:8000"},
			status: backend.HealthStatusOk, detailsSt: 1,
			contains: []string{"3 engines on 3 instances serving 1 model. Warning: 1 engine stalled (requests queued, no progress for 3m): b:8000 engine 0 — restart or drain them"}},
		{name: "names the first three", settings: with(90 * time.Second), window: 90 * time.Second, engines: 6,
			stalled: []string{"e:8000", "a:8000", "d:8000", "b:8000", "c:8000"}, status: backend.HealthStatusOk, detailsSt: 5,
			contains: []string{"Warning: 5 engines stalled (requests queued, no progress for 1m30s): a:8000 engine 0, b:8000 engine 0, c:8000 engine 0 and 2 more — restart or drain them"}},
		{name: "exactly three are all named", settings: base, window: 3 * time.Minute, engines: 4,
			stalled: []string{"c:8000", "a:8000", "b:8000"}, status: backend.HealthStatusOk, detailsSt: 3,
			contains: []string{"3 engines stalled (requests queued, no progress for 3m): a:8000 engine 0, b:8000 engine 0, c:8000 engine 0 — restart or drain them"},
			absent:   []string{"more"}},
		{name: "every engine stalled", settings: with(time.Hour), window: time.Hour, engines: 2, stalled: []string{"a:8000", "b:8000"},
			status: backend.HealthStatusError, detailsSt: 2,
			contains: []string{"Error: no awake engine is making progress: 2 engines stalled (requests queued, no progress for 1h): a:8000 engine 0, b:8000 engine 0 — restart or drain them"}},
		{name: "stalled and asleep: nothing serves", settings: with(10 * time.Second), window: 10 * time.Second, engines: 2,
			stalled: []string{"a:8000"}, sleeping: []string{"b:8000"}, status: backend.HealthStatusError, detailsSt: 1, detailsSl: 1,
			contains: []string{"Error: no awake engine is making progress: 1 engine stalled (requests queued, no progress for 10s)", ". 1 engine sleeping (sleep mode"}},
		{name: "asleep only is information", settings: base, window: 3 * time.Minute, engines: 2, sleeping: []string{"a:8000", "b:8000"},
			status: backend.HealthStatusOk, detailsSl: 2, contains: []string{"serving 1 model. 2 engines sleeping (sleep mode: put to sleep on purpose, neither down nor stalled)"},
			absent: []string{"stalled ("}},
		{name: "default window follows a slow scrape", settings: models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", ScrapeInterval: 2 * time.Minute},
			window: 4 * time.Minute, engines: 2, stalled: []string{"a:8000"}, status: backend.HealthStatusOk, detailsSt: 1,
			contains: []string{"no progress for 4m)"}},
		{name: "a failed check is said, not fatal", settings: base, window: 3 * time.Minute, engines: 2, failWith: errors.New("boom"),
			status: backend.HealthStatusOk, contains: []string{"Could not check for stalled engines: stalled engines: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := answering(tt.engines, tt.window, tt.settings, tt.stalled, tt.sleeping)
			f.failWith = tt.failWith
			res := health.Check(context.Background(), f, tt.settings, time.Now())
			require.Equal(t, tt.status, res.Status, res.Message)
			for _, c := range tt.contains {
				require.Contains(t, res.Message, c)
			}
			for _, a := range tt.absent {
				require.NotContains(t, res.Message, a)
			}
			var d struct {
				Stalled  int `json:"stalledEngines"`
				Sleeping int `json:"sleepingEngines"`
			}
			require.NoError(t, json.Unmarshal(res.JSONDetails, &d))
			require.Equal(t, tt.detailsSt, d.Stalled)
			require.Equal(t, tt.detailsSl, d.Sleeping)
		})
	}
}
