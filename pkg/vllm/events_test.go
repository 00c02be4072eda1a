package vllm

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

func stream(signal, inst, eng string, start time.Time, step time.Duration, vals ...float64) *series.Series {
	s := &series.Series{Labels: map[string]string{SignalTagLabel: signal, "instance": inst, "engine": eng, "model_name": "m"}}
	for i, v := range vals {
		if math.IsNaN(v) {
			continue // a gap
		}
		s.Times = append(s.Times, start.Add(time.Duration(i)*step))
		s.Values = append(s.Values, v)
	}
	return s
}

func TestPreemptionEvents(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 10 * time.Second
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * step) }
	gap := math.NaN()
	tests := []struct {
		name string
		m    series.Matrix
		want []Event
	}{
		{name: "no increase", m: series.Matrix{stream("preemptions", "a", "0", t0, step, 3, 3, 3)}},
		{name: "one step is a point", m: series.Matrix{stream("preemptions", "a", "0", t0, step, 0, 0, 2, 2)},
			want: []Event{{Start: at(2), End: at(2), From: at(0), Count: 2, KVUsage: math.NaN(), Instance: "a", Engine: "0", Model: "m"}}},
		{name: "consecutive steps merge, KV peak joined", m: series.Matrix{
			stream("preemptions", "a", "0", t0, step, 0, 1, 4, 5, 5, 7),
			stream("kv_usage", "a", "0", t0, step, 0.5, 0.99, 0.97, 0.9, 0.4, 0.95),
		}, want: []Event{
			{Start: at(1), End: at(3), From: at(0), Count: 5, KVUsage: 0.99, Instance: "a", Engine: "0", Model: "m"},
			// the second burst looks back a minute, over the first one's peak
			{Start: at(5), End: at(5), From: at(0), Count: 2, KVUsage: 0.99, Instance: "a", Engine: "0", Model: "m"},
		}},
		{name: "counter reset counts the new value", m: series.Matrix{stream("preemptions", "a", "0", t0, step, 10, 3)},
			want: []Event{{Start: at(1), End: at(1), From: at(0), Count: 3, KVUsage: math.NaN(), Instance: "a", Engine: "0", Model: "m"}}},
		{name: "a gap splits a burst", m: series.Matrix{stream("preemptions", "a", "0", t0, step, 0, 1, gap, 3)},
			want: []Event{
				{Start: at(1), End: at(1), From: at(0), Count: 1, KVUsage: math.NaN(), Instance: "a", Engine: "0", Model: "m"},
				{Start: at(3), End: at(3), From: at(0), Count: 2, KVUsage: math.NaN(), Instance: "a", Engine: "0", Model: "m"},
			}},
		{name: "engines apart, sorted by time", m: series.Matrix{
			stream("preemptions", "b", "1", t0, step, 0, 0, 1),
			stream("preemptions", "a", "0", t0, step, 0, 1, 1),
		}, want: []Event{
			{Start: at(1), End: at(1), From: at(0), Count: 1, KVUsage: math.NaN(), Instance: "a", Engine: "0", Model: "m"},
			{Start: at(2), End: at(2), From: at(0), Count: 1, KVUsage: math.NaN(), Instance: "b", Engine: "1", Model: "m"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PreemptionEvents(tt.m, "instance", step)
			require.Len(t, got, len(tt.want))
			for i := range got {
				w, g := tt.want[i], got[i]
				if math.IsNaN(w.KVUsage) {
					require.True(t, math.IsNaN(g.KVUsage))
					g.KVUsage, w.KVUsage = 0, 0
				}
				require.Equal(t, w, g)
			}
		})
	}
}

// TestPreemptionLookback: vLLM counts a preemption when the victim next
// emits, so the counter rises after the KV pressure that caused it. The
// region starts PreemptionLateness before the sample preceding the rise,
// and the KV peak shown is the highest in that span, not in one step
// before the rise; pressure before the span is not blamed.
func TestPreemptionLookback(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 15 * time.Second
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * step) }
	m := series.Matrix{
		stream("preemptions", "a", "0", t0, step, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2),
		// full long before, then the peak 45s before the counter's rise
		stream("kv_usage", "a", "0", t0, step, 1, 1, 1, 0.5, 0.5, 0.98, 0.6, 0.6, 0.6, 0.6),
	}
	got := PreemptionEvents(m, "instance", step)
	require.Len(t, got, 1)
	require.Equal(t, at(8), got[0].Start, "first counted")
	require.Equal(t, at(7).Add(-PreemptionLateness), got[0].From)
	require.Equal(t, at(3), got[0].From)
	require.Equal(t, 0.98, got[0].KVUsage)
}
