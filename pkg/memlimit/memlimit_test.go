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
