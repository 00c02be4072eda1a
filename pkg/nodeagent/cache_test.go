package nodeagent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// countingSource counts calls and blocks each one until release is closed.
type countingSource struct {
	calls   atomic.Int32
	release chan struct{}
	err     error
}

func (s *countingSource) GPUs(context.Context) ([]agentapi.GPU, error) {
	n := s.calls.Add(1)
	<-s.release
	return []agentapi.GPU{{Index: int(n)}}, s.err
}

func TestCachedBurstHitsSourceOnce(t *testing.T) {
	src := &countingSource{release: make(chan struct{})}
	c := NewCached(src, time.Minute)
	var wg sync.WaitGroup
	results := make([][]agentapi.GPU, 50)
	for i := range results {
		wg.Go(func() {
			gpus, err := c.GPUs(context.Background())
			require.NoError(t, err)
			results[i] = gpus
		})
	}
	time.Sleep(20 * time.Millisecond) // let them all queue on the flight
	close(src.release)
	wg.Wait()
	require.Equal(t, int32(1), src.calls.Load())
	for _, r := range results {
		require.Equal(t, []agentapi.GPU{{Index: 1}}, r)
	}
}

func TestCachedExpires(t *testing.T) {
	src := &countingSource{release: make(chan struct{})}
	close(src.release)
	now := time.Unix(1000, 0)
	c := NewCached(src, time.Second)
	c.now = func() time.Time { return now }
	steps := []struct {
		advance   time.Duration
		wantIndex int
	}{{0, 1}, {500 * time.Millisecond, 1}, {499 * time.Millisecond, 1}, {time.Millisecond, 2}, {0, 2}}
	for _, s := range steps {
		now = now.Add(s.advance)
		gpus, err := c.GPUs(context.Background())
		require.NoError(t, err)
		require.Equal(t, s.wantIndex, gpus[0].Index)
	}
}

func TestCachedCallerGivesUpSourceFinishes(t *testing.T) {
	src := &countingSource{release: make(chan struct{}), err: errors.New("driver gone")}
	c := NewCached(src, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := c.GPUs(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(src.release)
	require.Eventually(t, func() bool {
		_, err := c.GPUs(context.Background())
		return err != nil && err.Error() == "driver gone"
	}, time.Second, time.Millisecond)
	require.Equal(t, int32(1), src.calls.Load(), "the error is cached for the TTL too")
}
