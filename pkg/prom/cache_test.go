package prom

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// series returns a result of n points, to give entries a size.
func result(points int) Result {
	s := &Series{Labels: map[string]string{"instance": "a"}, Times: make([]time.Time, points), Values: make([]float64, points)}
	return Result{Matrix: Matrix{s}}
}

func fixedTTL(d time.Duration) func(Result) time.Duration {
	return func(Result) time.Duration { return d }
}

// counting returns a fetch that counts its calls and answers res.
func counting(n *atomic.Int32, res Result, err error) Fetch {
	return func(context.Context) (Result, error) {
		n.Add(1)
		return res, err
	}
}

func TestCacheTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := NewCache(0, clock.now)
	var n atomic.Int32
	fetch := counting(&n, result(10), nil)
	ctx := context.Background()

	for range 3 {
		r, err := c.Do(ctx, "k", fetch, fixedTTL(15*time.Second))
		require.NoError(t, err)
		require.Equal(t, 10, r.Matrix.Points())
	}
	require.Equal(t, int32(1), n.Load(), "fresh answers are served from the cache")

	clock.add(14 * time.Second)
	_, _ = c.Do(ctx, "k", fetch, fixedTTL(15*time.Second))
	require.Equal(t, int32(1), n.Load(), "still fresh 1s before the TTL")

	clock.add(time.Second)
	_, _ = c.Do(ctx, "k", fetch, fixedTTL(15*time.Second))
	require.Equal(t, int32(2), n.Load(), "expired at the TTL")

	_, _ = c.Do(ctx, "other", fetch, fixedTTL(15*time.Second))
	require.Equal(t, int32(3), n.Load(), "another key is another fetch")

	_, _ = c.Do(ctx, "never", fetch, fixedTTL(0))
	_, _ = c.Do(ctx, "never", fetch, fixedTTL(0))
	require.Equal(t, int32(5), n.Load(), "a TTL of 0 keeps nothing")
	require.Equal(t, int64(3), c.Stats().Hits)
	require.Equal(t, int64(5), c.Stats().Fetches)
}

func TestCacheErrorsAreNotKept(t *testing.T) {
	c := NewCache(0, nil)
	var n atomic.Int32
	boom := &Error{Kind: KindServer, Err: errors.New("overloaded")}
	for range 2 {
		_, err := c.Do(context.Background(), "k", counting(&n, Result{}, boom), fixedTTL(time.Minute))
		require.ErrorIs(t, err, boom)
	}
	require.Equal(t, int32(2), n.Load())
}

// TestCacheSharesInFlight: many callers of one key while it is fetched
// cause one fetch and all get its answer.
func TestCacheSharesInFlight(t *testing.T) {
	c := NewCache(0, nil)
	var n atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (Result, error) {
		n.Add(1)
		<-release
		return result(5), nil
	}
	const callers = 50
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Do(context.Background(), "k", fetch, fixedTTL(time.Second))
			if err == nil && r.Matrix.Points() != 5 {
				err = fmt.Errorf("got %d points", r.Matrix.Points())
			}
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return c.Stats().Shared == callers-1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int32(1), n.Load())
}

// TestCacheMemoryBound: the cache never holds more than its bound; the
// least recently used answer goes first; an answer bigger than a quarter
// of the bound is shared in flight but never kept.
func TestCacheMemoryBound(t *testing.T) {
	one := result(1000).sizeBytes()
	c := NewCache(4*one+one/2, nil) // room for four
	ctx := context.Background()
	var n atomic.Int32
	fetch := counting(&n, result(1000), nil)
	for i := range 4 {
		_, _ = c.Do(ctx, fmt.Sprint(i), fetch, fixedTTL(time.Minute))
	}
	require.Equal(t, 4, c.Stats().Entries)
	_, _ = c.Do(ctx, "0", fetch, fixedTTL(time.Minute)) // 0 is now the most recent
	require.Equal(t, int32(4), n.Load())

	_, _ = c.Do(ctx, "4", fetch, fixedTTL(time.Minute)) // evicts 1, the least recent
	st := c.Stats()
	require.Equal(t, 4, st.Entries)
	require.Equal(t, int64(1), st.Evictions)
	require.LessOrEqual(t, st.Bytes, 4*one+one/2)
	_, _ = c.Do(ctx, "0", fetch, fixedTTL(time.Minute))
	require.Equal(t, int32(5), n.Load(), "0 was kept")
	_, _ = c.Do(ctx, "1", fetch, fixedTTL(time.Minute))
	require.Equal(t, int32(6), n.Load(), "1 was evicted")

	big := counting(&n, result(5000), nil)
	_, _ = c.Do(ctx, "big", big, fixedTTL(time.Minute))
	_, _ = c.Do(ctx, "big", big, fixedTTL(time.Minute))
	require.Equal(t, int32(8), n.Load(), "an answer over a quarter of the bound is not kept")
	require.LessOrEqual(t, c.Stats().Bytes, 4*one+one/2)
}

// TestCacheWaiterCancellation: a caller whose context ends while it waits
// returns at once with its own error; the fetch goes on for the others;
// when the last one leaves, the fetch is canceled and forgotten.
func TestCacheWaiterCancellation(t *testing.T) {
	c := NewCache(0, nil)
	started := make(chan struct{})
	fetchCanceled := make(chan struct{})
	release := make(chan struct{})
	var n atomic.Int32
	fetch := func(ctx context.Context) (Result, error) {
		if n.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
			return result(3), nil
		case <-ctx.Done():
			close(fetchCanceled)
			return Result{}, ctx.Err()
		}
	}

	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := c.Do(leaderCtx, "k", fetch, fixedTTL(time.Minute))
		leaderErr <- err
	}()
	<-started
	followerCtx, cancelFollower := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancelFollower()
	_, err := c.Do(followerCtx, "k", fetch, fixedTTL(time.Minute))
	require.Equal(t, KindTimeout, KindOf(err), "the follower's deadline ends its wait")

	cancelLeader()
	require.Equal(t, KindCanceled, KindOf(<-leaderErr))
	select {
	case <-fetchCanceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the fetch was not canceled when its last waiter left")
	}

	close(release)
	r, err := c.Do(context.Background(), "k", fetch, fixedTTL(time.Minute))
	require.NoError(t, err, "a later caller starts afresh, not on the canceled fetch")
	require.Equal(t, 3, r.Matrix.Points())
	require.Equal(t, int32(2), n.Load())
}

// TestCacheLeaderLeavesFetchGoesOn: the caller that started a fetch may
// give up; the others still get the answer.
func TestCacheLeaderLeavesFetchGoesOn(t *testing.T) {
	c := NewCache(0, nil)
	release := make(chan struct{})
	var n atomic.Int32
	fetch := func(ctx context.Context) (Result, error) {
		n.Add(1)
		select {
		case <-release:
			return result(2), nil
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderDone := make(chan error, 1)
	go func() {
		_, err := c.Do(leaderCtx, "k", fetch, fixedTTL(time.Minute))
		leaderDone <- err
	}()
	require.Eventually(t, func() bool { return n.Load() == 1 }, 5*time.Second, time.Millisecond)
	followerDone := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "k", fetch, fixedTTL(time.Minute))
		followerDone <- err
	}()
	require.Eventually(t, func() bool { return c.Stats().Shared == 1 }, 5*time.Second, time.Millisecond)
	cancelLeader()
	require.Equal(t, KindCanceled, KindOf(<-leaderDone))
	close(release)
	require.NoError(t, <-followerDone)
	require.Equal(t, int32(1), n.Load())
}

// BenchmarkCacheHit is the cost of serving a cached answer.
func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(0, nil)
	var n atomic.Int32
	fetch := counting(&n, result(720), nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Do(ctx, "k", fetch, fixedTTL(time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
