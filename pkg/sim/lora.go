package sim

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LoRA, as vLLM V1 schedules and reports it.
//
// Admission (vllm/v1/core/sched/scheduler.py, the max_loras check in the
// waiting loop): a waiting request whose adapter is not among the running
// ones is skipped, not blocking the queue, while max_loras distinct
// adapters already run; the next request may still be admitted.
//
// Reporting (vllm/v1/metrics/stats.py LoRARequestStates and loggers.py
// PrometheusStatLogger.record): the frontend tracks a request's adapter
// from the engine events that arrive with the request's outputs, so it
// learns of a request only with its first output and forgets it when it
// finishes. update_scheduler_stats writes every tracked adapter into both
// the running and the waiting dict, so both labels carry the same
// comma-separated list, in the order the adapters were first tracked. Each
// engine step sets the gauge for that label set to the current unix time,
// and old label sets are never removed: every combination seen stays a
// series with the time it was last current.

// loraSeriesLimit bounds the label sets an engine remembers; the oldest
// goes first. vLLM keeps them all; a long simulation would grow without
// bound.
const loraSeriesLimit = 100

// loraState is an engine's adapter bookkeeping.
type loraState struct {
	on       bool
	max      int
	names    []string
	cdf      []float64 // cumulative Zipf(1) weights: adapter i is picked with weight 1/(i+1)
	run      []int     // running requests per adapter
	active   int       // adapters with a running request
	live     []int     // requests per adapter the frontend tracks
	order    []int     // adapters with live requests, in the order they were first tracked
	seen     map[string]time.Duration
	deferred int // waiting requests skipped in the last scheduling pass for the max_loras budget
}

func newLoRAState(gen Generation, p EngineParams) loraState {
	n := p.LoRAAdapters
	if gen != V1 || n <= 0 {
		return loraState{}
	}
	l := loraState{on: true, max: p.MaxLoRAs, run: make([]int, n), live: make([]int, n),
		seen: map[string]time.Duration{}}
	total := 0.0
	for i := range n {
		l.names = append(l.names, LoRAAdapterName(i))
		total += 1 / float64(i+1)
		l.cdf = append(l.cdf, total)
	}
	for i := range l.cdf {
		l.cdf[i] /= total
	}
	return l
}

// LoRAAdapterName is the name of adapter i: adapter-0, adapter-1, ….
func LoRAAdapterName(i int) string { return "adapter-" + strconv.Itoa(i) }

// pick draws a request's adapter, or -1 when LoRA is off.
func (l *loraState) pick(u float64) int {
	if !l.on {
		return -1
	}
	return min(sort.SearchFloat64s(l.cdf, u), len(l.cdf)-1)
}

// admissible reports whether r may join the running batch under max_loras.
func (l *loraState) admissible(r *request) bool {
	return !l.on || r.adapter < 0 || l.run[r.adapter] > 0 || l.active < l.max
}

func (l *loraState) enterRunning(r *request) {
	if !l.on || r.adapter < 0 {
		return
	}
	l.run[r.adapter]++
	if l.run[r.adapter] == 1 {
		l.active++
	}
}

func (l *loraState) leaveRunning(r *request) {
	if !l.on || r.adapter < 0 {
		return
	}
	l.run[r.adapter]--
	if l.run[r.adapter] == 0 {
		l.active--
	}
}

// firstOutput starts tracking r in the frontend's view.
func (l *loraState) firstOutput(r *request) {
	if !l.on || r.adapter < 0 {
		return
	}
	l.live[r.adapter]++
	if l.live[r.adapter] == 1 {
		l.order = append(l.order, r.adapter)
	}
}

// finished stops tracking r, if the frontend had seen it.
func (l *loraState) finished(r *request) {
	if !l.on || r.adapter < 0 || r.outputs == 0 {
		return
	}
	l.live[r.adapter]--
	if l.live[r.adapter] == 0 {
		l.order = slices.DeleteFunc(l.order, func(a int) bool { return a == r.adapter })
	}
}

// record sets the gauge of the current label set to now, as every engine
// step does.
func (l *loraState) record(now time.Duration) {
	if !l.on {
		return
	}
	names := make([]string, len(l.order))
	for i, a := range l.order {
		names[i] = l.names[a]
	}
	key := strings.Join(names, ",")
	if _, ok := l.seen[key]; !ok && len(l.seen) >= loraSeriesLimit {
		l.evictOldest()
	}
	l.seen[key] = now
}

// evictOldest forgets the label set current longest ago (ties by name, so
// the choice does not depend on map order).
func (l *loraState) evictOldest() {
	first, oldest := true, ""
	for k, t := range l.seen {
		if first || t < l.seen[oldest] || (t == l.seen[oldest] && k < oldest) {
			first, oldest = false, k
		}
	}
	delete(l.seen, oldest)
}

// runningNames is the sorted set of adapters with running requests.
func (l *loraState) runningNames() []string {
	var out []string
	for a, n := range l.run {
		if n > 0 {
			out = append(out, l.names[a])
		}
	}
	slices.Sort(out)
	return out
}

// waitingNames is the sorted set of adapters of requests that wait
// (queued, pulling KV, or ready to run).
func (e *engine) waitingNames() []string {
	if !e.lora.on {
		return nil
	}
	set := map[string]bool{}
	e.eachWaiting(func(r *request) {
		if r.adapter >= 0 {
			set[e.lora.names[r.adapter]] = true
		}
	})
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// loraInfoV1 is vllm:lora_requests_info for V1: no model_name or engine
// label, so rank 0 writes the label sets of all ranks of the instance (the
// newest time wins, as the shared gauge keeps the last set).
func loraInfoV1() family {
	return family{name: "vllm:lora_requests_info", help: "Running stats on lora requests.", typ: "gauge",
		series: func(e *engine, w *seriesWriter) {
			if e.rank != 0 {
				return
			}
			merged := map[string]time.Duration{}
			for _, s := range e.siblings {
				for k, t := range s.lora.seen {
					if old, ok := merged[k]; !ok || t > old {
						merged[k] = t
					}
				}
			}
			keys := make([]string, 0, len(merged))
			for k := range merged {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(merged[a], merged[b]), strings.Compare(a, b)) })
			for _, k := range keys {
				w.info(unixSeconds(w.at(merged[k])), "max_lora", itoa(e.lora.max),
					"running_lora_adapters", k, "waiting_lora_adapters", k)
			}
		}}
}

// unixSeconds is Python's time.time() for t.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
