package sim

import "bytes"

// Sleep-mode operation metrics as vLLM 0.32's API server keeps them
// (vllm/entrypoints/serve/dev/sleep/metrics.py and api_router.py): one
// process-wide collector pair in the default registry, so the series carry
// the operation label and neither model_name nor engine; both are created
// at the first sleep-mode request, so an instance nobody has put to sleep
// has neither family, not even HELP and TYPE. Later vLLM trees rename them
// vllm:rl_sleep_mode_* and add a counter by outcome; the simulator follows
// the 0.32 names the catalogue lists.

// Sleep-mode operations, in the order of vLLM's Operation literal.
const (
	sleepOpSleep = iota
	sleepOpReleaseKV
	sleepOpWake
	numSleepOps
)

// sleepOpNames are the operation label values. The simulator has no
// /release_kv_cache_memory route, so that operation's histogram series
// never appears; its in-flight gauge does, at 0, as vLLM pre-creates it.
var sleepOpNames = [numSleepOps]string{"sleep", "release_kv_cache_memory", "wake"}

// sleepOpBuckets is BUCKETS in vLLM's sleep metrics.py.
var sleepOpBuckets = []float64{0.01, 0.1, 1, 10, 30, 60, 120, 300, 600}

const (
	sleepOpDurationName = "vllm:sleep_mode_operation_duration_seconds"
	sleepOpInFlightName = "vllm:sleep_mode_operations_in_flight"
)

// sleepOpMetrics are one instance's sleep-mode collectors. The zero value
// is "created, nothing observed"; a histogram appears at its operation's
// first call, as prometheus_client's labels(...).observe creates a child.
type sleepOpMetrics struct {
	duration [numSleepOps]*histogram
}

// record observes one dispatched operation that took d seconds. The
// simulator's sleep and wake are instantaneous, so callers pass 0.
func (m *sleepOpMetrics) record(op int, d float64) {
	if m.duration[op] == nil {
		h := newHistogram(sleepOpBuckets)
		m.duration[op] = &h
	}
	m.duration[op].observe(d)
}

// write appends both families in registration order (the histogram, then
// the gauge). No call is ever in flight between scrapes: a simulated call
// completes within SetSleep.
func (m *sleepOpMetrics) write(buf *bytes.Buffer) {
	w := seriesWriter{buf: buf, name: sleepOpDurationName}
	buf.WriteString("# HELP " + sleepOpDurationName + " Duration of one sleep-mode operation.\n")
	buf.WriteString("# TYPE " + sleepOpDurationName + " histogram\n")
	for op, h := range m.duration {
		if h != nil {
			w.histogram(h, "operation", sleepOpNames[op])
		}
	}
	buf.WriteString("# HELP " + sleepOpInFlightName + " Sleep-mode operations currently awaited.\n")
	buf.WriteString("# TYPE " + sleepOpInFlightName + " gauge\n")
	for _, name := range sleepOpNames {
		w.line(sleepOpInFlightName, 0, nil, "operation", name)
	}
}

// sleepOperation is the operation a SetSleep call dispatches: level 0 is
// POST /wake_up, levels 1 and 2 POST /sleep.
func sleepOperation(level int) int {
	if level == 0 {
		return sleepOpWake
	}
	return sleepOpSleep
}
