package memlimit

// Returning a crowd's memory once the crowd has gone. The soft limit
// bounds the peak, but the runtime keeps the pages a crowd used up to the
// limit until its scavenger gets round to them, and the scavenger paces
// itself from the last collection's heap goal: a process that goes quiet
// after a burst triggers no further collection for up to two minutes, so
// it sits near the limit (203–228 MB after a 200-viewer minute with a
// 32 MiB live heap). One forced collection and release on the first quiet
// period after a busy one gives those pages back, and costs nothing while
// viewers are waiting because it never runs while they are.

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Trim defaults: a period is busy when the process allocated BusyBytes or
// more in it, quiet when it allocated less than QuietBytes (a health
// check or a detection refresh allocates far less; one dashboard refresh
// on a large fleet, far more).
const (
	TrimPeriod = 10 * time.Second
	BusyBytes  = 64 << 20
	QuietBytes = 4 << 20
)

// allocsMetric is the runtime's cumulative count of bytes allocated on
// the heap.
const allocsMetric = "/gc/heap/allocs:bytes"

// Trimmer decides, one period at a time, when to return memory: on the
// first quiet period after a busy one, once per burst.
type Trimmer struct {
	Busy, Quiet uint64 // bytes allocated in a period; see BusyBytes, QuietBytes
	last        uint64
	started     bool
	busy        bool
}

// Observe takes the cumulative bytes allocated so far and reports whether
// to return memory now.
func (t *Trimmer) Observe(allocated uint64) bool {
	if !t.started {
		t.started, t.last = true, allocated
		return false
	}
	delta := allocated - t.last
	t.last = allocated
	switch {
	case delta >= t.Busy:
		t.busy = true
	case delta < t.Quiet && t.busy:
		t.busy = false
		return true
	}
	return false
}

// TrimWhenIdle checks the process's allocation every period until ctx is
// done and, on the first quiet period after a busy one, runs a collection
// and returns the freed pages to the system (debug.FreeOSMemory). onTrim,
// when not nil, is called after each trim (for the log and tests).
func TrimWhenIdle(ctx context.Context, period time.Duration, onTrim func()) {
	tr := Trimmer{Busy: BusyBytes, Quiet: QuietBytes}
	tick := time.NewTicker(period)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: allocsMetric}}
	for {
		metrics.Read(sample)
		if tr.Observe(sample[0].Value.Uint64()) {
			debug.FreeOSMemory()
			if onTrim != nil {
				onTrim()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
