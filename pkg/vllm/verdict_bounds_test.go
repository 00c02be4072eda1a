package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestClassifyStepAtTheKVBoundary: KV-bound holds from the KV threshold
// and the preemption threshold on ("at or above"), for the defaults and
// for set thresholds; a hair below either is not KV-bound.
func TestClassifyStepAtTheKVBoundary(t *testing.T) {
	set := models.SaturationSettings{KVHigh: 0.75, Queue: 4, Preemptions: 0.5, Idle: 0.2}
	tests := []struct {
		name string
		th   models.SaturationSettings
		step SatStep
		want string
	}{
		{"defaults: KV exactly at its threshold", models.DefaultSaturation(), SatStep{Running: 8, KVUsage: 0.9, Preemptions: 1}, VerdictKVBound},
		{"defaults: preemptions exactly at their threshold", models.DefaultSaturation(), SatStep{Running: 8, KVUsage: 0.95, Preemptions: 0.01}, VerdictKVBound},
		{"defaults: both exactly at their thresholds", models.DefaultSaturation(), SatStep{Running: 8, KVUsage: 0.9, Preemptions: 0.01}, VerdictKVBound},
		{"defaults: KV just below", models.DefaultSaturation(), SatStep{Running: 8, KVUsage: 0.8999, Preemptions: 1}, VerdictOK},
		{"defaults: preemptions just below", models.DefaultSaturation(), SatStep{Running: 8, KVUsage: 0.95, Preemptions: 0.0099}, VerdictOK},
		{"set: KV exactly at its threshold", set, SatStep{Running: 8, KVUsage: 0.75, Preemptions: 0.5}, VerdictKVBound},
		{"set: KV just below", set, SatStep{Running: 8, KVUsage: 0.7499, Preemptions: 0.5}, VerdictOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ClassifyStep(tt.step, 8, tt.th))
		})
	}
}

// TestKVBoundOutranksQueueing: an engine that preempts with its KV cache
// full is KV-bound even while requests queue (more replicas of the same
// shape do not fix it), per step and over the range when both problems
// hold in at least a quarter of the steps.
func TestKVBoundOutranksQueueing(t *testing.T) {
	th := models.DefaultSaturation()
	kvBound := SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.99, Preemptions: 1, Arrivals: 5, Completions: 5}
	queueing := SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.3, Arrivals: 5, Completions: 5}
	fine := SatStep{Waiting: 0, Running: 6, RunningPeak: 8, KVUsage: 0.3, Arrivals: 5, Completions: 5}
	t.Run("one step", func(t *testing.T) {
		require.Equal(t, VerdictKVBound, ClassifyStep(kvBound, 8, th))
		require.Equal(t, VerdictQueueing, ClassifyStep(queueing, 8, th))
	})
	tests := []struct {
		name  string
		steps []SatStep
		want  string
	}{
		{name: "KV-bound in a quarter, queueing in the rest", want: VerdictKVBound,
			steps: []SatStep{kvBound, queueing, queueing, queueing}},
		{name: "queueing in a quarter, KV-bound in a quarter", want: VerdictKVBound,
			steps: []SatStep{queueing, kvBound, fine, fine}},
		{name: "queueing in half, KV-bound in a quarter", want: VerdictKVBound,
			steps: []SatStep{queueing, queueing, kvBound, fine}},
		{name: "queueing in a quarter, KV-bound in fewer", want: VerdictQueueing,
			steps: []SatStep{queueing, queueing, kvBound, fine, fine, fine, fine, fine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(tt.steps, th)
			require.Equal(t, tt.want, v.Verdict, v.Reason)
		})
	}
}

// TestStalledOutranksEveryVerdict: a step stalled over the stall window is
// stalled whatever else it shows (a queue behind a hung engine is not a
// reason to add replicas); the range is stalled from its last step or a
// quarter of its steps on, ahead of overloaded, KV-bound and queueing, and
// not below that share unless the last step is stalled.
func TestStalledOutranksEveryVerdict(t *testing.T) {
	th := models.DefaultSaturation()
	stalledQueue := SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.3, Stalled: true}
	stalledKV := SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.99, Preemptions: 1, Stalled: true}
	queueing := SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.3, Arrivals: 5, Completions: 5}
	growing := func(w float64) SatStep {
		return SatStep{Waiting: w, Running: 8, RunningPeak: 8, KVUsage: 0.3, Arrivals: 9, Completions: 5}
	}
	fine := SatStep{Waiting: 0, Running: 6, RunningPeak: 8, KVUsage: 0.3, Arrivals: 5, Completions: 5}
	t.Run("one step", func(t *testing.T) {
		require.Equal(t, VerdictStalled, ClassifyStep(stalledQueue, 8, th))
		require.Equal(t, VerdictStalled, ClassifyStep(stalledKV, 8, th))
		require.Equal(t, VerdictQueueing, ClassifyStep(queueing, 8, th), "the same queue, moving")
	})
	tests := []struct {
		name  string
		steps []SatStep
		want  string
	}{
		{name: "stalled at the last step only", want: VerdictStalled,
			steps: []SatStep{queueing, queueing, queueing, queueing, queueing, queueing, queueing, stalledQueue}},
		{name: "stalled in a quarter, queueing in the rest", want: VerdictStalled,
			steps: []SatStep{stalledQueue, queueing, queueing, queueing}},
		{name: "stalled in a quarter, KV-bound in the rest", want: VerdictStalled,
			steps: []SatStep{stalledKV, stalledKV, kvBoundStep, kvBoundStep, kvBoundStep, kvBoundStep, kvBoundStep, kvBoundStep}},
		{name: "stalled at the end of a growing queue", want: VerdictStalled,
			steps: []SatStep{growing(2), growing(6), growing(10), growing(14), growing(18), growing(22), growing(26), {Waiting: 30, Running: 8, RunningPeak: 8, Stalled: true}}},
		{name: "stalled in fewer than a quarter, not at the end", want: VerdictQueueing,
			steps: []SatStep{stalledQueue, queueing, queueing, queueing, queueing, fine, fine, fine}},
		{name: "never stalled", want: VerdictQueueing, steps: []SatStep{queueing, queueing, fine, fine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(tt.steps, th)
			require.Equal(t, tt.want, v.Verdict, v.Reason)
			if tt.want == VerdictStalled {
				require.Contains(t, v.Reason, "restart or drain")
				require.NotContains(t, v.Reason, "add replicas")
			}
		})
	}
}

// kvBoundStep is a step that preempts with its KV cache full.
var kvBoundStep = SatStep{Waiting: 20, Running: 8, RunningPeak: 8, KVUsage: 0.99, Preemptions: 1, Arrivals: 5, Completions: 5}
