package live_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/live"
)

// counting is a TickFunc that counts its calls and stamps each frame with
// the call's number.
type counting struct{ n atomic.Int64 }

func (c *counting) tick(context.Context, time.Time) *data.Frame {
	n := c.n.Add(1)
	return data.NewFrame("tick", data.NewField("n", nil, []int64{n}))
}

// received are the tick numbers one subscriber was sent.
type received struct {
	mu  sync.Mutex
	got []int64
}

func (r *received) ticks() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.got...)
}

// receive runs one subscriber of key until ctx ends, collecting the tick
// numbers it was sent.
func receive(ctx context.Context, h *live.Hub, key string, tick live.TickFunc, wg *sync.WaitGroup) *received {
	r := &received{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = h.Run(ctx, key, 20*time.Millisecond, tick, func(f *data.Frame) error {
			r.mu.Lock()
			r.got = append(r.got, f.Fields[0].At(0).(int64))
			r.mu.Unlock()
			return nil
		})
	}()
	return r
}

// TestHubOneLoopPerChannel: two subscribers of one channel share one loop
// (one tick, one query, for both), a third channel has its own, and when
// the last subscriber leaves every goroutine the hub started is gone.
func TestHubOneLoopPerChannel(t *testing.T) {
	before := runtime.NumGoroutine()
	h := &live.Hub{}
	var queue, fleet counting
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	a := receive(ctx, h, "queue", queue.tick, &wg)
	b := receive(ctx, h, "queue", queue.tick, &wg)
	c := receive(ctx, h, "fleet", fleet.tick, &wg)
	require.Eventually(t, func() bool { return queue.n.Load() >= 10 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 2, h.Channels(), "one loop per channel, not per subscriber")
	cancel()
	wg.Wait()
	require.Equal(t, 0, h.Channels(), "the last subscriber stops the loop")

	ticks := queue.n.Load()
	require.LessOrEqual(t, int64(len(a.ticks())), ticks)
	require.LessOrEqual(t, int64(len(b.ticks())), ticks)
	require.GreaterOrEqual(t, len(a.ticks())+len(b.ticks()), int(ticks), "each tick went to both subscribers: one tick, two frames")
	require.NotEmpty(t, c.ticks())
	requireGoroutinesBack(t, before)
	n := queue.n.Load()
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, n, queue.n.Load(), "no tick after the last subscriber left")
}

// TestHubSubscriberLeaves: one subscriber leaving keeps the loop for the
// other; a subscriber whose send fails leaves with that error.
func TestHubSubscriberLeaves(t *testing.T) {
	h := &live.Hub{}
	var queue counting
	stay, cancelStay := context.WithCancel(context.Background())
	defer cancelStay()
	var wg sync.WaitGroup
	got := receive(stay, h, "queue", queue.tick, &wg)
	require.Eventually(t, func() bool { return len(got.ticks()) > 0 }, 5*time.Second, 5*time.Millisecond)

	broken := errors.New("grafana went away")
	err := h.Run(context.Background(), "queue", 20*time.Millisecond, queue.tick, func(*data.Frame) error { return broken })
	require.ErrorIs(t, err, broken)
	require.Equal(t, 1, h.Channels(), "the other subscriber keeps the loop")
	at := queue.n.Load()
	require.Eventually(t, func() bool { return queue.n.Load() > at+3 }, 5*time.Second, 5*time.Millisecond, "the loop goes on")
	cancelStay()
	wg.Wait()
	require.Equal(t, 0, h.Channels())
	require.NotEmpty(t, got.ticks())
}

// TestHubFirstTickAtOnce: a new channel ticks when it starts, not one
// interval later.
func TestHubFirstTickAtOnce(t *testing.T) {
	h := &live.Hub{}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		_ = h.Run(ctx, "slow", time.Hour, (&counting{}).tick, func(*data.Frame) error {
			select {
			case first <- time.Since(start):
			default:
			}
			return nil
		})
	}()
	select {
	case d := <-first:
		require.Less(t, d, 5*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("no frame before the first interval ended")
	}
	cancel()
	require.Eventually(t, func() bool { return h.Channels() == 0 }, 5*time.Second, 5*time.Millisecond)
}

// requireGoroutinesBack waits until no more goroutines run than before;
// polled here, not with require.Eventually, whose own goroutines count.
func requireGoroutinesBack(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines left: %d, before: %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
