package vllm

import (
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"
)

// Event is one burst of preemptions on one engine: consecutive steps in
// which the preemption counter rose, merged into a region.
type Event struct {
	// Start is the first step whose sample shows an increase; End the last.
	Start, End time.Time
	// Count is the number of preemptions in the burst.
	Count float64
	// KVUsage is the engine's peak KV-cache usage during the burst (0..1),
	// NaN when the fleet does not expose it.
	KVUsage  float64
	Instance string
	Engine   string
	Model    string
}

// engineKey identifies one engine's series.
type engineKey struct{ instance, engine, model string }

// PreemptionEvents finds bursts in the result of Builder.Preemptions: per
// engine, every step where the counter rose starts or extends a burst; a
// step without an increase ends it. A drop is a counter reset (restart),
// where the new value is the increase. step is the query step, used to
// tell consecutive samples from a gap.
func PreemptionEvents(m model.Matrix, instanceLabel string, step time.Duration) []Event {
	counters, kv := map[engineKey]*model.SampleStream{}, map[engineKey]*model.SampleStream{}
	for _, s := range m {
		k := engineKey{string(s.Metric[model.LabelName(instanceLabel)]), string(s.Metric["engine"]), string(s.Metric["model_name"])}
		switch s.Metric[SignalLabel] {
		case "preemptions":
			counters[k] = s
		case "kv_usage":
			kv[k] = s
		}
	}
	var out []Event
	for k, s := range counters {
		out = append(out, bursts(k, s.Values, kv[k], step)...)
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
func bursts(k engineKey, vals []model.SamplePair, kv *model.SampleStream, step time.Duration) []Event {
	var out []Event
	var cur *Event
	for i := 1; i < len(vals); i++ {
		prev, p := vals[i-1], vals[i]
		inc := float64(p.Value - prev.Value)
		if inc < 0 {
			inc = float64(p.Value) // counter reset
		}
		adjacent := p.Timestamp.Sub(prev.Timestamp) <= step
		t := p.Timestamp.Time().UTC()
		switch {
		case inc > 0 && cur != nil && adjacent:
			cur.End, cur.Count = t, cur.Count+inc
		case inc > 0:
			out = append(out, Event{Start: t, End: t, Count: inc, Instance: k.instance, Engine: k.engine, Model: k.model})
			cur = &out[len(out)-1]
		default:
			cur = nil
		}
	}
	for i := range out {
		out[i].KVUsage = peak(kv, out[i].Start, out[i].End, step)
	}
	return out
}

// peak is the highest KV usage from one step before a burst to its end:
// the pressure that caused it is often visible just before.
func peak(kv *model.SampleStream, start, end time.Time, step time.Duration) float64 {
	if kv == nil {
		return math.NaN()
	}
	best := math.NaN()
	from := model.TimeFromUnixNano(start.Add(-step).UnixNano())
	to := model.TimeFromUnixNano(end.UnixNano())
	for _, p := range kv.Values {
		if p.Timestamp.Before(from) || p.Timestamp.After(to) {
			continue
		}
		if v := float64(p.Value); math.IsNaN(best) || v > best {
			best = v
		}
	}
	return best
}
