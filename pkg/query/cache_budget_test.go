package query_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// fleetProm answers every range query with engines series, a point on
// every step, so answers have the size of a fleet's.
type fleetProm struct {
	*countingProm
	engines int
}

func (f fleetProm) QueryRange(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	_, _, _ = f.countingProm.QueryRange(ctx, expr, r)
	m := make(prom.Matrix, 0, f.engines)
	for i := range f.engines {
		s := &prom.Series{Labels: map[string]string{"instance": fmt.Sprintf("10.0.0.%d:8000", i), "vllm_signal": "waiting"}}
		for t := r.Start; !t.After(r.End); t = t.Add(r.Step) {
			s.Times = append(s.Times, t)
			s.Values = append(s.Values, float64(i))
		}
		m = append(m, s)
	}
	return m, nil, nil
}

// TestCacheBytesBoundsBothStores: the result cache and the incremental
// range store of one instance share CacheBytes: dashboards over many
// ranges fill both, and what they keep together never exceeds it.
func TestCacheBytesBoundsBothStores(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	p := fleetProm{countingProm: newCountingProm(), engines: 8}
	e := cacheExecutor(p, clock)
	e.Settings.Incremental = true
	e.Settings.IncrementalOverlap = 10 * time.Minute
	e.CacheBytes = 4 << 20

	for k := 1; k <= 40; k++ {
		from := now.Add(-time.Duration(k) * 15 * time.Minute)
		resp := run(t, e, dq("A", `{"queryType":"queue"}`, from, now))
		requireAnswers(t, resp)
		cached, based := e.Cache.Stats().Bytes, e.Increments.Stats().Bytes
		require.LessOrEqual(t, cached+based, e.CacheBytes,
			"after dashboard %d: cache %d + range store %d bytes within CacheBytes", k, cached, based)
	}
	require.Positive(t, e.Cache.Stats().Entries, "the cache keeps answers")
	require.Positive(t, e.Increments.Stats().Bases, "the range store keeps answers")
	require.Positive(t, e.Cache.Stats().Evictions+e.Increments.Stats().Evictions, "the budget was reached")
}
