// Package memlimit sets the plugin process's soft memory limit from its
// memory budget, so that the Go runtime returns memory to the system
// after a crowd of viewers instead of holding the peak (issue 37: a
// 200-viewer minute left the process at 424 MB RSS while its heap was
// within budget; Grafana pods often run with 512 MiB–1 GiB limits).
package memlimit

import (
	"math"
	"runtime/debug"
	"sync"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// Instances is how many data-source instances' cache budgets the limit
// makes room for: a Grafana usually holds one or two vLLM data sources,
// and a settings change briefly keeps the old instance beside the new.
const Instances = 3

// BaseBytes is the process's own memory beside the caches: the SDK's
// gRPC server, Arrow encoding of the answers being sent, and the
// answers being decoded (about 30 MB at start; the rest is room for a
// crowd's answers in flight).
const BaseBytes = 64 << 20

// EnvVar is the Go runtime's own setting of the limit; when the
// environment sets it (a value, or "off"), the runtime has applied it
// and the plugin leaves it alone.
const EnvVar = "GOMEMLIMIT"

// Limit is the soft memory limit derived from a per-instance cache
// budget (prom.DefaultCacheBytes when budget <= 0): BaseBytes plus
// Instances budgets. With the default budget, 256 MiB.
func Limit(budget int64) int64 {
	return LimitFor(budget, Instances)
}

// LimitFor is the limit with room for live instances' budgets, never
// fewer than Instances: a limit below what the caches may hold keeps the
// collector running at its cap (half the CPU) to defend it.
func LimitFor(budget int64, live int) int64 {
	if budget <= 0 {
		budget = prom.DefaultCacheBytes
	}
	return BaseBytes + int64(max(live, Instances))*budget
}

// Source says where the process's memory limit came from.
type Source string

// Sources of the limit.
const (
	FromBudget Source = "budget"
	FromEnv    Source = "GOMEMLIMIT"
)

// Apply sets the process's soft memory limit to Limit(budget) (more while
// more instances are live: Track) unless the
// environment sets GOMEMLIMIT (getenv reads it; os.Getenv in the plugin),
// and returns the limit now in force and where it came from. A soft
// limit makes the garbage collector run more often near it and the
// runtime return freed pages sooner; it never fails an allocation, so a
// burst above it is slower, not an error.
func Apply(getenv func(string) string, budget int64) (int64, Source) {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	if getenv(EnvVar) != "" {
		tracked.owned = false
		return debug.SetMemoryLimit(-1), FromEnv // -1 reads the limit without changing it
	}
	tracked.budget, tracked.owned = budget, true
	limit := LimitFor(budget, tracked.live)
	debug.SetMemoryLimit(limit)
	return limit, FromBudget
}

// tracked is the process's live data-source instances (Track), and
// whether the limit is the plugin's to move (Apply set it from the
// budget, not the environment).
var tracked struct {
	mu     sync.Mutex
	live   int
	budget int64
	owned  bool
}

// Track counts a data-source instance as live until the returned release
// is called (once; later calls do nothing), and keeps the limit at
// LimitFor the live instances when Apply set it: a Grafana with more
// vLLM data sources in use than Instances gets room for each one's
// cache.
func Track() (release func()) {
	move(1)
	var once sync.Once
	return func() { once.Do(func() { move(-1) }) }
}

// Live is the number of instances Track counts now.
func Live() int {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	return tracked.live
}

func move(by int) {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	tracked.live += by
	if tracked.owned {
		debug.SetMemoryLimit(LimitFor(tracked.budget, tracked.live))
	}
}

// Unlimited is the runtime's value for no limit (GOMEMLIMIT=off).
const Unlimited = math.MaxInt64
