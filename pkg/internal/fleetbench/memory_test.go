package fleetbench

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/memlimit"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// instanceOverhead is what the plugin process may hold after a load per
// data source instance besides the answers its cache budget counts: the
// executor's detector and profile caches, its HTTP transport and pooled
// connections' buffers, the stores' maps and keys. Stated here so that it
// cannot grow unnoticed; pkg/query's TestRetainedHeapWithinBudget states
// the executor's own share (2 MiB).
const instanceOverhead = 8 << 20

// launch starts the plugin with Grafana's profiling variables set, so that
// its heap after a collection can be read, and reads it once before any
// call.
func (e *env) launch(t *testing.T, plugin string) {
	env, addr := grafanahost.Profiling(t)
	e.host = grafanahost.LaunchWith(t, plugin, grafanahost.LaunchOptions{Env: env})
	e.pprof = addr
	e.heapStart = heapAfterGC(t, addr)
}

// heapAfterGC is the plugin's heap in use right after a full collection,
// which the pprof server runs before it answers (heap?gc=1). The server
// starts beside the plugin's gRPC one, so the first read may come early.
func heapAfterGC(t *testing.T, addr string) uint64 {
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var u grafanahost.Usage
		if u, err = grafanahost.Stats(addr); err == nil {
			return u.Heap
		}
	}
	require.NoError(t, err, "the plugin's profiling server")
	return 0
}

// budgetBound is the most the plugin's heap may hold after a load: what
// it held at the start, plus, for every data source instance it keeps,
// the cache budget and the stated overhead.
func budgetBound(heapStart uint64, instances int) uint64 {
	return heapStart + uint64(instances)*(prom.DefaultCacheBytes+instanceOverhead)
}

// afterLoad reads the plugin's memory once the crowd has finished: its
// heap after two collections, its resident memory and the instances it
// keeps; and fails when the heap is over the budget's bound: the one
// cache budget per instance must bound what the process retains, not
// only what the stores count.
func (e *env) afterLoad(t *testing.T, res *loadResult) {
	// Two collections: sync.Pool keeps what it holds through one (its
	// victim cache), and gRPC pools its message buffers there
	// (google.golang.org/grpc/mem); the second shows what the process
	// keeps. After a 1,000-engine crowd the first read 241 MiB and the
	// second 41 MiB, with nothing running in between.
	res.heapOneGCMB = float64(heapAfterGC(t, e.pprof)) / (1 << 20)
	heap := heapAfterGC(t, e.pprof)
	res.heapAfterMB = float64(heap) / (1 << 20)
	res.rssAfterMB = procMB(e.host.Pid(), "VmRSS:")
	res.instances = e.host.Instances()
	// And once the process has been quiet long enough for its trimmer
	// (pkg/memlimit, trim.go) to see a quiet period after the busy one.
	time.Sleep(2*memlimit.TrimPeriod + 5*time.Second)
	res.rssQuietMB = procMB(e.host.Pid(), "VmRSS:")
	bound := budgetBound(e.heapStart, res.instances)
	require.LessOrEqual(t, heap, bound, "%s: after the load the plugin's heap (after a collection) is %.1f MiB, over the %.1f MiB at its start plus %d instances × (%d MiB budget + %d MiB overhead)",
		res.name, res.heapAfterMB, float64(e.heapStart)/(1<<20), res.instances, prom.DefaultCacheBytes>>20, instanceOverhead>>20)
}

// memoryCells are the crowd tables' memory columns: the heap after the
// load against its bound, the resident memory right after it and once
// quiet, and the peak.
func memoryCells(ld loadResult, heapStart uint64) string {
	bound := float64(budgetBound(heapStart, ld.instances)) / (1 << 20)
	return fmt.Sprintf("%.0f MiB of %.0f MiB (%d instances; %.0f MiB after one GC) | %.0f MB | %.0f MB | %.0f MB", ld.heapAfterMB, bound, ld.instances, ld.heapOneGCMB, ld.rssAfterMB, ld.rssQuietMB, ld.rssPeakMB)
}

// memoryHeader names the memory columns (memoryCells); memoryColumns
// is their count, for the tables' separator rows.
const (
	memoryHeader  = "plugin heap after the load and two GCs (bound: start + instances × (budget + overhead)) | plugin RSS right after the load | plugin RSS after 25 s quiet | plugin peak RSS"
	memoryColumns = 4
)
