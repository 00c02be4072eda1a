package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Scheduling policies: vLLM's --scheduling-policy (vllm/v1/core/sched/
// request_queue.py SchedulingPolicy).
const (
	PolicyFCFS     = "fcfs"
	PolicyPriority = "priority"
)

// priorityClasses are the values of the priority label vLLM 0.32 writes on
// the finished-request families under --scheduling-policy priority
// (vllm/v1/metrics/loggers.py bucket_priority, pinned by
// tests/v1/metrics/test_priority_metrics.py): -1, 0 and 1 kept, everything
// below -1 and above 1 bucketed, so the label has five values at most.
var priorityClasses = [numPriorityClasses]string{"<-1", "-1", "0", "1", ">1"}

const numPriorityClasses = 5

// priorityClass is the index into priorityClasses of a raw priority.
func priorityClass(p int) int {
	switch {
	case p < -1:
		return 0
	case p > 1:
		return numPriorityClasses - 1
	default:
		return p + 2
	}
}

// requestPriorityBuckets are vllm:request_priority's bounds. Not read from
// loggers.py: vllm/v1/metrics/buckets.py has no priority family, and the
// one fact seen (the test above reads le="1.0" and le="10.0") fits
// prometheus_client's default buckets, which a Histogram without buckets
// gets. Negative priorities all fall in the first bucket.
var requestPriorityBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}

// PriorityWeight is one priority value of a PriorityMix and its share.
type PriorityWeight struct {
	Priority int
	Weight   float64
}

// PriorityMix is the share of arrivals at each priority (lower is served
// first, as in vLLM). Its text form, used by --priority-mix and the config
// file, is PRIORITY:WEIGHT,… e.g. "-1:1,0:3,1:1"; weights need not sum to
// one. Empty means every request has vLLM's default priority 0.
type PriorityMix []PriorityWeight

// String returns the text form.
func (m PriorityMix) String() string {
	parts := make([]string, len(m))
	for i, w := range m {
		parts[i] = strconv.Itoa(w.Priority) + ":" + fmtNum(w.Weight)
	}
	return strings.Join(parts, ",")
}

// MarshalText implements encoding.TextMarshaler.
func (m PriorityMix) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *PriorityMix) UnmarshalText(b []byte) error {
	*m = nil
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	for part := range strings.SplitSeq(string(b), ",") {
		ps, ws, ok := strings.Cut(strings.TrimSpace(part), ":")
		p, perr := strconv.Atoi(ps)
		w, werr := strconv.ParseFloat(ws, 64)
		if !ok || perr != nil || werr != nil || !(w > 0) || w > 1e300 {
			return fmt.Errorf("%w: priority mix %q: each entry is PRIORITY:WEIGHT with an integer priority and a positive weight",
				ErrInvalidConfig, string(b))
		}
		*m = append(*m, PriorityWeight{Priority: p, Weight: w})
	}
	return nil
}

// draw picks a priority with probability proportional to its weight.
func (m PriorityMix) draw(rng *rand.Rand) int {
	total := 0.0
	for _, w := range m {
		total += w.Weight
	}
	x := rng.Float64() * total
	for _, w := range m {
		if x < w.Weight {
			return w.Priority
		}
		x -= w.Weight
	}
	return m[len(m)-1].Priority
}

// validatePriority checks the policy and the mix: vLLM refuses a request
// with a priority other than 0 unless the policy is priority.
func (p EngineParams) validatePriority() error {
	switch p.SchedulingPolicy {
	case "", PolicyFCFS:
		for _, w := range p.PriorityMix {
			if w.Priority != 0 {
				return fmt.Errorf("%w: priority_mix %s has priorities other than 0, which need scheduling_policy %q (vLLM refuses them under fcfs)",
					ErrInvalidConfig, p.PriorityMix, PolicyPriority)
			}
		}
		return nil
	case PolicyPriority:
		return nil
	default:
		return fmt.Errorf("%w: scheduling_policy %q is not one of fcfs, priority", ErrInvalidConfig, p.SchedulingPolicy)
	}
}

// priorityOn reports whether the engine schedules by priority.
func (e *engine) priorityOn() bool { return e.p.SchedulingPolicy == PolicyPriority }

// before is the priority policy's order: lower priority value first, then
// earlier arrival (vLLM's Request ordering in its PriorityRequestQueue),
// then the lower id for a tie.
func before(a, b *request) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.arrival != b.arrival {
		return a.arrival < b.arrival
	}
	return a.id < b.id
}

// queue puts r in the waiting queue: at the back (an arrival) or the front
// (a preemption victim) first come, first served; in (priority, arrival)
// order under the priority policy, where vLLM's heap has no front.
func (e *engine) queue(r *request, front bool) {
	switch {
	case e.priorityOn():
		i := e.waiting.len()
		for i > 0 && before(r, e.waiting.at(i-1)) {
			i--
		}
		e.waiting.insertAt(i, r)
	case front:
		e.waiting.pushFront(r)
	default:
		e.waiting.pushBack(r)
	}
}

// runningAt is where r joins the running list: at the end, or under the
// priority policy in (priority, arrival) order, so that the last running
// request is always vLLM's priority victim, max(running, key=(priority,
// arrival_time)) (vllm/v1/core/sched/scheduler.py). vLLM keeps admission
// order and may unschedule a victim it already scheduled this step; here
// the victim is never in the step's batch yet, and the same request is
// chosen.
func (e *engine) runningAt(r *request) int {
	i := len(e.running)
	if e.priorityOn() {
		for i > 0 && before(r, e.running[i-1]) {
			i--
		}
	}
	return i
}

// priorityStats are the per-class observations of an engine that writes the
// priority label (V1, release 0.32, priority policy).
type priorityStats struct {
	label   bool
	h       [numPriorityClasses]*hists // nil until a request of the class is observed
	success [numPriorityClasses][numReasons]int64
	raw     histogram // request_priority: the raw value of each finished request
}

// classHists returns the histograms of r's class, made on first use with
// the bounds of the engine's own (custom buckets included), or nil when the
// engine writes no priority label.
func (e *engine) classHists(r *request) *hists {
	if !e.prio.label {
		return nil
	}
	c := priorityClass(r.priority)
	if e.prio.h[c] == nil {
		e.prio.h[c] = e.h.emptyLike()
	}
	return e.prio.h[c]
}

// emptyLike returns empty histograms with h's bounds.
func (h *hists) emptyLike() *hists {
	n := func(x histogram) histogram { return newHistogram(x.bounds) }
	return &hists{
		ttft: n(h.ttft), itl: n(h.itl), tpot: n(h.tpot), e2e: n(h.e2e), queue: n(h.queue),
		inference: n(h.inference), prefill: n(h.prefill), decode: n(h.decode), iteration: n(h.iteration),
		promptTokens: n(h.promptTokens), genTokens: n(h.genTokens), maxGen: n(h.maxGen), paramsN: n(h.paramsN),
		paramsMaxTokens: n(h.paramsMaxTokens), prefillKV: n(h.prefillKV), numPreemptions: n(h.numPreemptions),
		kvXfer: n(h.kvXfer), kvPost: n(h.kvPost), kvBytes: n(h.kvBytes), kvDesc: n(h.kvDesc),
	}
}

// finishedHist is a finished-request histogram family: with the priority
// label, one series set per class seen, on an engine that writes it; the
// engine's own histogram otherwise. Custom buckets apply to the engine's
// histogram, whose bounds the classes copy.
func finishedHist(name, help string, h func(*hists) *histogram) family {
	return family{name: name, help: help, typ: "histogram",
		series: func(e *engine, w *seriesWriter) {
			if !e.prio.label {
				w.histogram(h(&e.h))
				return
			}
			for c, ch := range e.prio.h {
				if ch != nil {
					w.histogram(h(ch), "priority", priorityClasses[c])
				}
			}
		},
		hist: func(e *engine) *histogram { return h(&e.h) }}
}

// requestPriorityFamily is vllm:request_priority, registered only under the
// priority policy: the raw priority of each finished request, without the
// priority label.
func requestPriorityFamily() family {
	return family{name: "vllm:request_priority", help: "Histogram of the priority of finished requests.",
		typ: "histogram", series: func(e *engine, w *seriesWriter) { w.histogram(&e.prio.raw) },
		hist: func(e *engine) *histogram { return &e.prio.raw }}
}
