package vllm

import (
	"math"
	"sort"
	"time"

	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// Event is one burst of preemptions on one engine: consecutive steps in
// which the preemption counter rose, merged into a region.
type Event struct {
	// Start is the first step whose sample shows an increase; End the last.
	Start, End time.Time
	// From is the earliest the burst's first preemption can have happened:
	// the sample before Start less PreemptionLateness (see there), cut to
	// the first sample of the answer. The region and the KV peak start here.
	From time.Time
	// Count is the number of preemptions in the burst.
	Count float64
	// KVUsage is the engine's peak KV-cache usage during the burst (0..1),
	// NaN when the fleet does not expose it.
	KVUsage  float64
	Instance string
	Engine   string
	Model    string
}

// PreemptionLateness is how much earlier than the counter's rise a
// preemption is assumed to have happened. vLLM counts a preemption only when
// the preempted request next emits output (the event leaves the engine with
// that output), so the counter rises late by the victim's wait to be
// scheduled again plus one step. V1 puts a preempted request back at the
// head of the waiting queue, so that wait is the time the running batch
// takes to free its blocks, which under KV pressure is seconds to tens of
// seconds; a minute covers it with margin while keeping bursts a few minutes
// apart separate. Provisional: to be replaced by the lateness the
// simulator's preemption log measures.
const PreemptionLateness = time.Minute

// engineKey identifies one engine's series.
type engineKey struct{ instance, engine, model string }

// PreemptionEvents finds bursts in the result of Builder.Preemptions: per
// engine, every step where the counter rose starts or extends a burst; a
// step without an increase ends it. A drop is a counter reset (restart),
// where the new value is the increase. step is the query step, used to
// tell consecutive samples from a gap.
func PreemptionEvents(m series.Matrix, instanceLabel string, step time.Duration) []Event {
	return PreemptionEventsBy(m, func(ls map[string]string) string { return ls[instanceLabel] }, step)
}

// PreemptionEventsBy is PreemptionEvents with the server named by
// instanceOf (Builder.InstanceOf: namespace/pod on Kubernetes).
func PreemptionEventsBy(m series.Matrix, instanceOf func(map[string]string) string, step time.Duration) []Event {
	counters, kv := map[engineKey]*series.Series{}, map[engineKey]*series.Series{}
	for _, s := range m {
		k := engineKey{instanceOf(s.Labels), s.Labels["engine"], s.Labels["model_name"]}
		switch s.Labels[SignalTagLabel] {
		case "preemptions":
			counters[k] = s
		case "kv_usage":
			kv[k] = s
		}
	}
	var out []Event
	for k, s := range counters {
		out = append(out, bursts(k, s, kv[k], step)...)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Instance+"\x00"+out[i].Engine < out[j].Instance+"\x00"+out[j].Engine
	})
	return out
}

// bursts walks one counter series.
func bursts(k engineKey, s *series.Series, kv *series.Series, step time.Duration) []Event {
	var out []Event
	var cur *Event
	for i := 1; i < len(s.Values); i++ {
		inc := s.Values[i] - s.Values[i-1]
		if inc < 0 {
			inc = s.Values[i] // counter reset
		}
		adjacent := s.Times[i].Sub(s.Times[i-1]) <= step
		t := s.Times[i]
		switch {
		case inc > 0 && cur != nil && adjacent:
			cur.End, cur.Count = t, cur.Count+inc
		case inc > 0:
			from := s.Times[i-1].Add(-PreemptionLateness)
			if from.Before(s.Times[0]) {
				from = s.Times[0]
			}
			out = append(out, Event{Start: t, End: t, From: from, Count: inc, Instance: k.instance, Engine: k.engine, Model: k.model})
			cur = &out[len(out)-1]
		default:
			cur = nil
		}
	}
	for i := range out {
		out[i].KVUsage = peak(kv, out[i].From, out[i].End)
	}
	return out
}

// peak is the highest KV usage from the burst's From to its End: the
// pressure that caused a preemption precedes the counter's late rise.
func peak(kv *series.Series, from, end time.Time) float64 {
	if kv == nil {
		return math.NaN()
	}
	best := math.NaN()
	for i, ts := range kv.Times {
		if ts.Before(from) || ts.After(end) {
			continue
		}
		if v := kv.Values[i]; math.IsNaN(best) || v > best {
			best = v
		}
	}
	return best
}
