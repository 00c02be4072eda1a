//go:build !mutation

package query_test

// The retained-heap test loads a 1,000-engine fleet's answers from eight
// callers for about ten seconds: it runs in every normal go test, but not
// once per mutant (the mutation tier, -tags mutation), where it was two
// thirds of each mutant's test time; the stores' byte bound itself is
// checked in the unit tier by TestCacheBytesBoundsBothStores.

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"
)

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
