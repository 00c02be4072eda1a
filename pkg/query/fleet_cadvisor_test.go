package query_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// cadvisorProm is instantFake whose store gains cAdvisor families while a
// test runs: MetricNames answers the cAdvisor probe's selector with
// families (or probeErr), anything else with the vLLM names. It keeps the
// instant expressions it was asked and the probe's selectors.
type cadvisorProm struct {
	instantFake
	mu       sync.Mutex
	families []string
	probeErr error
	asked    []string
	probes   []string
}

func (p *cadvisorProm) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, expr)
	p.mu.Unlock()
	return p.instantFake.Query(ctx, expr, ts)
}

func (p *cadvisorProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (p *cadvisorProm) MetricNames(_ context.Context, sel string, _, _ time.Time) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !strings.Contains(sel, "container_memory_working_set_bytes") {
		return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
	}
	p.probes = append(p.probes, sel)
	if p.probeErr != nil {
		return nil, p.probeErr
	}
	// A store answers with every name it has, whatever it was asked
	// (the probe keeps only the cAdvisor families it asked for).
	return append([]string{"vllm:num_requests_running"}, p.families...), nil
}

// containerExprs are the asked expressions that read cAdvisor, reset.
func (p *cadvisorProm) containerExprs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.asked {
		if strings.Contains(e, "container_") {
			out = append(out, e)
		}
	}
	p.asked = nil
	return out
}

// TestFleetContainerColumnsFollowTheCAdvisorProbe: the fleet table asks
// Prometheus for a container column only where the cAdvisor probe (run
// once per detection refresh) found its family; without cAdvisor the
// columns are absent, as the empty answers left them, and they come with
// the first refresh after cAdvisor's series appear. A probe Prometheus
// cannot answer leaves the columns asked for, as before the probe.
func TestFleetContainerColumnsFollowTheCAdvisorProbe(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	fresh := float64(now.Add(-time.Second).Unix())
	server := func(v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": "a:1"}, Value: model.SampleValue(v)}
	}
	p := &cadvisorProm{instantFake: instantFake{
		"max by (instance, engine, model_name) (last_over_time(":            {sample("a:1", "0", 1)},
		"max by (instance, engine, model_name) (timestamp(":                 {sample("a:1", "0", fresh)},
		"max by (instance) (group by (instance) (vllm:num_requests_running": {server(0.4)},
	}}
	clock := now
	e := &query.Executor{Prom: p, Settings: goldenSettings(), Detector: query.NewDetector(p, "vllm:", func() time.Time { return clock })}
	table := func(t *testing.T) map[string]any {
		t.Helper()
		resp := e.QueryData(context.Background(), goldenRequest(recording{From: clock.Add(-time.Minute), To: clock}, map[string]string{"F": `{"queryType":"fleet"}`}))
		r := resp.Responses["F"]
		require.NoError(t, r.Error)
		rows := fleetRows(t, r.Frames[0])
		require.Len(t, rows, 1)
		return rows[0]
	}
	tests := []struct {
		name      string
		families  []string
		probeErr  error
		wantExprs int
		wantCols  bool
	}{
		{name: "no cAdvisor: neither column asked, both absent", wantExprs: 0},
		{name: "cAdvisor appears: both asked at the next refresh", families: []string{"container_memory_working_set_bytes", "container_cpu_cfs_throttled_periods_total"},
			wantExprs: 2, wantCols: true},
		{name: "working set without CFS series (no CPU limits anywhere): memory only", families: []string{"container_memory_working_set_bytes"},
			wantExprs: 1, wantCols: true},
		{name: "cAdvisor gone again", wantExprs: 0},
		{name: "probe fails: both asked, as before the probe", probeErr: errors.New("503"), wantExprs: 2, wantCols: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock = clock.Add(query.DetectionTTL + time.Second) // a detection refresh
			p.mu.Lock()
			p.families, p.probeErr, p.probes = tt.families, tt.probeErr, nil
			p.mu.Unlock()
			row := table(t)
			exprs := p.containerExprs()
			require.Len(t, exprs, tt.wantExprs, "container expressions asked: %v", exprs)
			_, hasThrottled := row["CPU throttled %"]
			_, hasMemory := row["memory % of limit"]
			require.Equal(t, tt.wantCols, hasThrottled, "throttling column")
			require.Equal(t, tt.wantCols, hasMemory, "memory column")
			if tt.wantCols {
				require.InDelta(t, 0.4, row["memory % of limit"], 1e-9, "the server's answer, where asked")
				if tt.wantExprs == 2 {
					require.InDelta(t, 0.4, row["CPU throttled %"], 1e-9)
				} else {
					require.Nil(t, row["CPU throttled %"], "not asked: null, never 0")
				}
			}
			table(t) // a second table within the refresh: the probe is cached
			require.Len(t, p.probes, 1, "one probe per detection refresh")
		})
	}
}
