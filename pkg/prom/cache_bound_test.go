package prom

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"
)

// TestCacheBoundHoldsWhenOneInsertNeedsSeveralEvictions: a large answer
// arriving in a cache full of small ones evicts as many of the least
// recently used as it takes to get back within the bound, not just one.
func TestCacheBoundHoldsWhenOneInsertNeedsSeveralEvictions(t *testing.T) {
	small := result(1).sizeBytes()
	tests := []struct {
		name      string
		smalls    int
		bigPoints int
	}{
		{name: "one small makes room", smalls: 20, bigPoints: 1},
		{name: "several smalls make room", smalls: 20, bigPoints: 20},
		{name: "a quarter of the bound", smalls: 40, bigPoints: 0}, // set below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound := int64(tt.smalls) * small
			points := tt.bigPoints
			if points == 0 { // the largest answer still kept: a quarter of the bound
				for result(points+1).sizeBytes() <= bound/4 {
					points++
				}
			}
			big := result(points).sizeBytes()
			require.LessOrEqual(t, big, bound/4, "the big answer is kept")
			wantEvicted := int((big + small - 1) / small) // smalls to drop to fit big
			require.Less(t, wantEvicted, tt.smalls)

			c := NewCache(bound, nil)
			ctx := context.Background()
			var n atomic.Int32
			for i := range tt.smalls {
				_, err := c.Do(ctx, fmt.Sprint(i), counting(&n, result(1), nil), fixedTTL(time.Minute))
				require.NoError(t, err)
			}
			require.Equal(t, bound, c.Stats().Bytes, "full to the byte")

			_, err := c.Do(ctx, "big", counting(&n, result(points), nil), fixedTTL(time.Minute))
			require.NoError(t, err)
			st := c.Stats()
			require.LessOrEqual(t, st.Bytes, bound, "the bound holds after the insert")
			require.Equal(t, int64(wantEvicted), st.Evictions)
			require.Equal(t, tt.smalls-wantEvicted+1, st.Entries)

			// The least recently used went; the rest and the big one stay.
			fetches := n.Load()
			_, _ = c.Do(ctx, "big", counting(&n, result(points), nil), fixedTTL(time.Minute))
			_, _ = c.Do(ctx, fmt.Sprint(tt.smalls-1), counting(&n, result(1), nil), fixedTTL(time.Minute))
			require.Equal(t, fetches, n.Load(), "the big answer and the newest small one are served from the cache")
			_, _ = c.Do(ctx, "0", counting(&n, result(1), nil), fixedTTL(time.Minute))
			require.Equal(t, fetches+1, n.Load(), "the oldest small one was evicted")
		})
	}
}

// TestIncrementsBoundHoldsWhenOneBaseNeedsSeveralEvictions: the bases of
// incremental range queries keep the same bound as the result cache: a
// large base arriving among small ones evicts as many as it takes.
func TestIncrementsBoundHoldsWhenOneBaseNeedsSeveralEvictions(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(24 * time.Hour)}
	w := &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}
	steps := func(n int) v1.Range { return v1.Range{Start: t0, End: t0.Add(time.Duration(n) * step), Step: step} }
	sizeOf := func(r v1.Range) int64 { // a base's size, alone in a roomy store
		inc := NewIncrements(time.Minute, 1<<30, clock.now)
		_, _, err := inc.Query(context.Background(), "k", r, w.fetch)
		require.NoError(t, err)
		return inc.Stats().Bytes
	}
	const smalls = 20
	small := sizeOf(steps(1))
	bound := smalls * small
	n := 1
	for sizeOf(steps(n+1)) <= bound/4 {
		n++
	}
	big := sizeOf(steps(n))
	wantEvicted := int((big + small - 1) / small)
	require.Greater(t, wantEvicted, 1, "the big base needs several evictions")

	inc := NewIncrements(time.Minute, bound, clock.now)
	for i := range smalls {
		_, _, err := inc.Query(context.Background(), fmt.Sprint(i), steps(1), w.fetch)
		require.NoError(t, err)
	}
	require.Equal(t, bound, inc.Stats().Bytes, "full to the byte")
	_, _, err := inc.Query(context.Background(), "big", steps(n), w.fetch)
	require.NoError(t, err)
	s := inc.Stats()
	require.LessOrEqual(t, s.Bytes, bound, "the bound holds after the insert")
	require.Equal(t, int64(wantEvicted), s.Evictions)
	require.Equal(t, smalls-wantEvicted+1, s.Bases)
}
