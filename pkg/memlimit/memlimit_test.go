package memlimit

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// TestApply: without GOMEMLIMIT the process's limit becomes the one
// derived from the budget (read back from the runtime); with it set, the
// runtime's limit is left as it was and reported as the environment's.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	tests := []struct {
		name       string
		env        string
		budget     int64
		start      int64 // the runtime's limit before Apply
		want       int64
		wantSource Source
	}{
		{"default budget", "", 0, math.MaxInt64, 256 << 20, FromBudget},
		{"a larger budget", "", 128 << 20, math.MaxInt64, 64<<20 + 3*128<<20, FromBudget},
		{"GOMEMLIMIT set: left alone", "1GiB", 0, 1 << 30, 1 << 30, FromEnv},
		{"GOMEMLIMIT=off: left alone", "off", 0, Unlimited, Unlimited, FromEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetMemoryLimit(tt.start)
			got, src := Apply(func(k string) string {
				require.Equal(t, EnvVar, k)
				return tt.env
			}, tt.budget)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantSource, src)
			require.Equal(t, tt.want, debug.SetMemoryLimit(-1), "the runtime's limit")
		})
	}
}

// TestLimitCoversTheBudget: the limit leaves room for Instances full
// caches beside the process's own memory, and stays under the 300 MB
// peak the goal allows for a 512 MiB pod.
func TestLimitCoversTheBudget(t *testing.T) {
	require.Equal(t, int64(BaseBytes+Instances*prom.DefaultCacheBytes), Limit(0))
	require.Less(t, Limit(0), int64(300e6))
	require.Greater(t, Limit(0), int64(Instances*prom.DefaultCacheBytes))
}

// TestTrackMovesTheLimit: while more data-source instances are live than
// Instances, the limit makes room for each one's budget, and goes back as
// they are released (a release called twice counts once); with the limit
// from GOMEMLIMIT, tracking never moves it.
func TestTrackMovesTheLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	base := Live()

	Apply(func(string) string { return "" }, 0)
	var releases []func()
	for range Instances - base {
		releases = append(releases, Track())
	}
	require.Equal(t, Limit(0), limit(), "up to Instances: the base limit")
	releases = append(releases, Track(), Track())
	require.Equal(t, int64(BaseBytes+(Instances+2)*prom.DefaultCacheBytes), limit(), "two more: room for two more budgets")
	releases[len(releases)-1]()
	releases[len(releases)-1]()
	require.Equal(t, int64(BaseBytes+(Instances+1)*prom.DefaultCacheBytes), limit(), "one released (twice): one fewer")
	releases[len(releases)-2]()
	require.Equal(t, Limit(0), limit())

	for _, r := range releases[:len(releases)-2] {
		r()
	}
	require.Equal(t, base, Live(), "every instance released")

	debug.SetMemoryLimit(1 << 30)
	Apply(func(string) string { return "1GiB" }, 0)
	for range Instances + 2 {
		release := Track()
		defer release()
	}
	require.Equal(t, int64(1<<30), limit(), "GOMEMLIMIT's limit is left alone")
}

// TestLimitFor: never room for fewer than Instances budgets.
func TestLimitFor(t *testing.T) {
	for _, tt := range []struct {
		budget int64
		live   int
		want   int64
	}{
		{0, 0, 256 << 20},
		{0, Instances, 256 << 20},
		{0, Instances + 1, 320 << 20},
		{32 << 20, 5, 64<<20 + 5*32<<20},
		{-1, 1, 256 << 20},
	} {
		require.Equal(t, tt.want, LimitFor(tt.budget, tt.live), "budget %d, live %d", tt.budget, tt.live)
	}
}
