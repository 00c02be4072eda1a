package query_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
)

// roleProm is instantFake whose store has role labels on its running
// series or not: MetricNames answers the role probe's selectors (a role
// label set) with the running gauge's name where roles is true (or
// probeErr), anything else with the vLLM names. It keeps the instant
// expressions it was asked and counts the probe's lookups.
type roleProm struct {
	instantFake
	mu       sync.Mutex
	roles    bool
	probeErr error
	asked    []string
	probes   int
}

func (p *roleProm) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, expr)
	p.mu.Unlock()
	return p.instantFake.Query(ctx, expr, ts)
}

func (p *roleProm) MetricNames(_ context.Context, sel string, _, _ time.Time) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !strings.Contains(sel, `_role!=""`) {
		return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
	}
	p.probes++
	if p.probeErr != nil {
		return nil, p.probeErr
	}
	if p.roles {
		return []string{"vllm:num_requests_running"}, nil
	}
	return nil, nil
}

// roleExprs are the asked expressions that group by the role labels, reset.
func (p *roleProm) roleExprs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.asked {
		if strings.Contains(e, "llm_isvc_role") {
			out = append(out, e)
		}
	}
	p.asked = nil
	return out
}

// TestFleetRoleColumnFollowsTheRoleProbe: the fleet table asks Prometheus
// for its role column only where the role probe (run once per detection
// refresh) found a running series with a role label; without one the
// column is empty, as the answer without role labels left it, and it
// comes back with the first refresh after roles appear. A probe
// Prometheus cannot answer leaves the column asked for, as before.
func TestFleetRoleColumnFollowsTheRoleProbe(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	fresh := float64(now.Add(-time.Second).Unix())
	withRole := sample("a:1", "0", 1)
	withRole.Metric["llm_isvc_role"] = "prefill"
	p := &roleProm{instantFake: instantFake{
		"max by (instance, engine, model_name) (last_over_time(":                                    {sample("a:1", "0", 1)},
		"max by (instance, engine, model_name) (timestamp(":                                         {sample("a:1", "0", fresh)},
		"group by (instance, engine, model_name, llm_isvc_role, llm_d_ai_role) (vllm:num_requests_": {withRole},
	}}
	clock := now
	e := &query.Executor{Prom: p, Settings: goldenSettings(), Detector: query.NewDetector(p, "vllm:", func() time.Time { return clock })}
	role := func(t *testing.T) string {
		t.Helper()
		resp := e.QueryData(context.Background(), goldenRequest(recording{From: clock.Add(-time.Minute), To: clock}, map[string]string{"F": `{"queryType":"fleet"}`}))
		r := resp.Responses["F"]
		require.NoError(t, r.Error)
		rows := fleetRows(t, r.Frames[0])
		require.Len(t, rows, 1)
		return rows[0]["role"].(string)
	}
	tests := []struct {
		name       string
		roles      bool
		probeErr   error
		wantAsked  bool
		wantProbes int
	}{
		{name: "no role label: not asked, the column empty", wantProbes: 2},
		{name: "roles appear: asked at the next refresh", roles: true, wantAsked: true, wantProbes: 1},
		{name: "roles gone again", wantProbes: 2},
		{name: "probe fails: asked, as before the probe", probeErr: errors.New("503"), wantAsked: true, wantProbes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock = clock.Add(query.DetectionTTL + time.Second) // a detection refresh
			p.mu.Lock()
			p.roles, p.probeErr, p.probes = tt.roles, tt.probeErr, 0
			p.mu.Unlock()
			got := role(t)
			exprs := p.roleExprs()
			if tt.wantAsked {
				require.Len(t, exprs, 1, "role expression asked: %v", exprs)
				require.Equal(t, "prefill", got)
			} else {
				require.Empty(t, exprs, "role expression asked: %v", exprs)
				require.Empty(t, got, "no role, as an answer without role labels gives")
			}
			role(t) // a second table within the refresh: the probe is cached
			require.Equal(t, tt.wantProbes, p.probes, "one probe per label at most, once per detection refresh")
		})
	}
}
