package query_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
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

// retainOverhead is what an executor may hold after load besides the
// answers its budget counts: the detector's and profiles' caches, the
// stores' maps and lists, keys. Stated here so it cannot grow unnoticed.
// (With a budget per store, this load kept about 19 MB of a 16 MiB budget.)
const retainOverhead = 2 << 20

// TestRetainedHeapWithinBudget: after concurrent callers refresh
// dashboards over many ranges of a 1,000-engine fleet, the live heap the
// executor keeps is within CacheBytes plus a stated overhead, so the
// budget bounds what the process retains, not just what the stores count.
func TestRetainedHeapWithinBudget(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	p := fleetProm{countingProm: newCountingProm(), engines: 1000}
	e := cacheExecutor(p, clock)
	e.Settings.Incremental = true
	e.Settings.IncrementalOverlap = 10 * time.Minute
	e.CacheBytes = 16 << 20

	before := heapInUse()
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for k := range 12 {
				span := time.Duration(1+c*12+k) * 5 * time.Minute
				q := dq("A", `{"queryType":"queue"}`, now.Add(-span), now)
				q.MaxDataPoints = 60
				resp := e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}})
				requireAnswers(t, resp)
			}
		})
	}
	wg.Wait()
	kept := heapInUse() - before
	counted := e.Cache.Stats().Bytes + e.Increments.Stats().Bytes
	t.Logf("stores count %d bytes, heap kept %d (budget %d)", counted, kept, e.CacheBytes)
	require.Positive(t, e.Cache.Stats().Evictions+e.Increments.Stats().Evictions, "the load reached the budget")
	require.LessOrEqual(t, kept, e.CacheBytes+retainOverhead, "the executor keeps more than its budget and the stated overhead")
	runtime.KeepAlive(e)
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
