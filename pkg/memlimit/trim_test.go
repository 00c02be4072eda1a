package memlimit

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTrimmerObserve: a trim comes on the first quiet period after a busy
// one, once per burst; never on the first reading, during a burst, after
// a period neither busy nor quiet, or while the process was never busy.
func TestTrimmerObserve(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name      string
		allocated []uint64 // cumulative readings, one per period
		want      []bool
	}{
		{"first reading only sets the base", []uint64{500 * mib}, []bool{false}},
		{"quiet from the start: never", []uint64{0, 1 * mib, 2 * mib, 3 * mib}, []bool{false, false, false, false}},
		{"busy then quiet: trim once", []uint64{0, 100 * mib, 101 * mib, 102 * mib}, []bool{false, false, true, false}},
		{"exactly Busy counts as busy", []uint64{0, 64 * mib, 64 * mib}, []bool{false, false, true}},
		{"just under Busy is not busy", []uint64{0, 64*mib - 1, 64*mib - 1}, []bool{false, false, false}},
		{"exactly Quiet is not quiet", []uint64{0, 100 * mib, 104 * mib, 104 * mib}, []bool{false, false, false, true}},
		{"a long burst trims only after it", []uint64{0, 100 * mib, 200 * mib, 300 * mib, 301 * mib}, []bool{false, false, false, false, true}},
		{"two bursts, two trims", []uint64{0, 100 * mib, 100 * mib, 200 * mib, 200 * mib}, []bool{false, false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Trimmer{Busy: BusyBytes, Quiet: QuietBytes}
			for i, a := range tt.allocated {
				require.Equal(t, tt.want[i], tr.Observe(a), "period %d", i)
			}
		})
	}
}

// sink keeps the burst's allocations from being optimised away.
var sink [][]byte

// TestTrimWhenIdleReturnsMemory: with the real runtime, a burst of
// allocation followed by quiet gets its freed pages returned to the
// system within a few periods, and only once.
func TestTrimWhenIdleReturnsMemory(t *testing.T) {
	read := func(name string) uint64 {
		s := []metrics.Sample{{Name: name}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trims := make(chan time.Time, 10)
	const period = 300 * time.Millisecond
	go TrimWhenIdle(ctx, period, func() { trims <- time.Now() })
	time.Sleep(period / 2) // the base reading
	for range 256 {        // 256 MiB over about one period: busy
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
	runtime.GC()
	retained := read("/memory/classes/heap/free:bytes")
	require.Greater(t, retained, uint64(64<<20), "the burst's pages are free but still held")
	select {
	case <-trims:
	case <-time.After(20 * period):
		t.Fatal("no trim after the burst went quiet")
	}
	require.Less(t, read("/memory/classes/heap/free:bytes"), uint64(16<<20), "the free pages went back to the system")
	select {
	case <-trims:
		t.Fatal("a second trim with no new burst")
	case <-time.After(4 * period):
	}
}
