package prom

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"
)

// sharedStores is a result cache and an incremental-range store charged
// to one budget, as the executor makes them per data-source instance.
type sharedStores struct {
	budget *Budget
	cache  *Cache
	inc    *Increments
	w      *world
	t0     time.Time
	step   time.Duration
}

func newSharedStores(bound int64) *sharedStores {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(24 * time.Hour)}
	b := NewBudget(bound)
	return &sharedStores{
		budget: b, cache: b.NewCache(clock.now), inc: b.NewIncrements(time.Minute, clock.now),
		w: &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}, t0: t0, step: step,
	}
}

// steps is a range of n steps, whose base has a size growing with n.
func (s *sharedStores) steps(n int) v1.Range {
	return v1.Range{Start: s.t0, End: s.t0.Add(time.Duration(n) * s.step), Step: s.step}
}

func (s *sharedStores) putResult(t *testing.T, key string, points int) {
	t.Helper()
	var n atomic.Int32
	_, err := s.cache.Do(context.Background(), key, counting(&n, result(points), nil), fixedTTL(time.Hour))
	require.NoError(t, err)
}

func (s *sharedStores) putBase(t *testing.T, key string, steps int) {
	t.Helper()
	_, _, err := s.inc.Query(context.Background(), key, s.steps(steps), s.w.fetch)
	require.NoError(t, err)
}

// requireWithin checks that the two stores together keep no more than
// the budget, and that the budget counts exactly what they keep.
func (s *sharedStores) requireWithin(t *testing.T, msg string) {
	t.Helper()
	sum := s.cache.Stats().Bytes + s.inc.Stats().Bytes
	require.Equal(t, sum, s.budget.Used(), "%s: the budget counts what the stores keep", msg)
	require.LessOrEqual(t, sum, s.budget.Max(), "%s: both stores together stay within the budget", msg)
}

// TestBudgetBoundsBothStoresTogether: the result cache and the store of
// range answers share one budget, so filling both keeps their sum within
// it after every insert (separate budgets would let each fill it).
func TestBudgetBoundsBothStoresTogether(t *testing.T) {
	small := result(1).sizeBytes()
	bound := 30 * small
	s := newSharedStores(bound)
	for i := range 60 {
		s.putResult(t, fmt.Sprint("r", i), 1)
		s.requireWithin(t, fmt.Sprint("result ", i))
		s.putBase(t, fmt.Sprint("b", i), 1)
		s.requireWithin(t, fmt.Sprint("base ", i))
	}
	cs, is := s.cache.Stats(), s.inc.Stats()
	require.Positive(t, cs.Entries, "the cache keeps its recent answers")
	require.Positive(t, is.Bases, "the range store keeps its recent bases")
	require.Positive(t, cs.Evictions+is.Evictions)
	require.Greater(t, s.budget.Used(), bound*3/4, "the budget is used, not wasted")
}

// TestBudgetEvictsAcrossStores: a big base arriving when the budget is
// full of results evicts the least recently used results, as many as it
// takes, and the cache counts those evictions; a recently used result
// survives.
func TestBudgetEvictsAcrossStores(t *testing.T) {
	small := result(1).sizeBytes()
	const smalls = 40
	bound := smalls * small
	s := newSharedStores(bound)
	n := 1
	for {
		probe := newSharedStores(1 << 30)
		probe.putBase(t, "k", n+1)
		if probe.inc.Stats().Bytes > bound/4 {
			break
		}
		n++
	}
	for i := range smalls {
		s.putResult(t, fmt.Sprint(i), 1)
	}
	s.requireWithin(t, "full of results")
	require.Equal(t, bound, s.budget.Used(), "full to the byte")
	s.putResult(t, "0", 1) // a hit: "0" becomes the most recently used

	s.putBase(t, "big", n)
	s.requireWithin(t, "after the big base")
	big := s.inc.Stats().Bytes
	wantEvicted := int((big + small - 1) / small)
	require.Greater(t, wantEvicted, 1, "the base needs several evictions")
	cs := s.cache.Stats()
	require.Equal(t, int64(wantEvicted), cs.Evictions, "the cache lost as many results as the base needed")
	require.Equal(t, smalls-wantEvicted, cs.Entries)
	require.Equal(t, 1, s.inc.Stats().Bases, "the base is kept")

	var fetched atomic.Int32
	_, err := s.cache.Do(context.Background(), "0", counting(&fetched, result(1), nil), fixedTTL(time.Hour))
	require.NoError(t, err)
	require.Zero(t, fetched.Load(), "the recently used result survived")
	_, err = s.cache.Do(context.Background(), "1", counting(&fetched, result(1), nil), fixedTTL(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int32(1), fetched.Load(), "the least recently used result went")
}

// TestBudgetReleasesWhatStoresForget: expiry in the cache and a base
// replaced by a newer one give their bytes back to the shared budget.
func TestBudgetReleasesWhatStoresForget(t *testing.T) {
	s := newSharedStores(1 << 20)
	s.putBase(t, "k", 10)
	s.putBase(t, "k", 20) // replaces the first base
	s.requireWithin(t, "replaced base")
	require.Equal(t, 1, s.inc.Stats().Bases)

	clock := &fakeClock{t: s.t0}
	c := s.budget.NewCache(clock.now)
	var n atomic.Int32
	_, err := c.Do(context.Background(), "x", counting(&n, result(5), nil), fixedTTL(time.Second))
	require.NoError(t, err)
	require.Equal(t, s.inc.Stats().Bytes+c.Stats().Bytes, s.budget.Used())
	clock.add(2 * time.Second)
	_, err = c.Do(context.Background(), "y", counting(&n, result(5), nil), fixedTTL(time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, c.Stats().Entries, "x expired")
	require.Equal(t, s.inc.Stats().Bytes+c.Stats().Bytes, s.budget.Used(), "the expired result's bytes went back")
}

// TestBudgetHoldsUnderConcurrency: callers filling both stores at once
// never see the budget exceeded, and it ends counting what the stores keep.
func TestBudgetHoldsUnderConcurrency(t *testing.T) {
	bound := 20 * result(1).sizeBytes()
	s := newSharedStores(bound)
	var wg sync.WaitGroup
	var over atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				key := fmt.Sprint(g, "-", i%30)
				var n atomic.Int32
				_, _ = s.cache.Do(context.Background(), key, counting(&n, result(1+i%5), nil), fixedTTL(time.Hour))
				if used := s.budget.Used(); used > bound {
					over.Store(used)
				}
				// world's fetch records what it was asked, which is not
				// safe for concurrent use: each query runs on a copy.
				w := *s.w
				_, _, _ = s.inc.Query(context.Background(), key, s.steps(1+i%5), w.fetch)
				if used := s.budget.Used(); used > bound {
					over.Store(used)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, over.Load(), "the budget was exceeded")
	s.requireWithin(t, "after the storm")
}
