package vllm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// satSet are the thresholds the range-verdict tests below sit on.
var satSet = models.SaturationSettings{KVHigh: 0.9, Queue: 4, Preemptions: 0.5, Idle: 0.2}

// Steps of each kind under satSet, with a batch ceiling of 4.
func qStep(waiting float64) SatStep {
	return SatStep{Waiting: waiting, Running: 4, RunningPeak: 4, KVUsage: 0.5, Arrivals: 3, Completions: 2}
}

func kvStep(waiting float64) SatStep {
	return SatStep{Waiting: waiting, Running: 4, RunningPeak: 4, KVUsage: 0.95, Preemptions: 1, Arrivals: 3, Completions: 2}
}

func okStep() SatStep {
	return SatStep{Running: 4, RunningPeak: 4, KVUsage: 0.5, Arrivals: 2, Completions: 2}
}
func idleStep() SatStep {
	return SatStep{Running: 0, RunningPeak: 4, KVUsage: 0.1}
}

// repeatSteps is n copies of the step mk(i) makes for each index.
func repeatSteps(n int, mk func(i int) SatStep) []SatStep {
	out := make([]SatStep, n)
	for i := range out {
		out[i] = mk(i)
	}
	return out
}

// growing is n queueing steps whose queue grows from 4 by 1 a step.
func growing(n int) []SatStep {
	return repeatSteps(n, func(i int) SatStep { return qStep(4 + float64(i)) })
}

// The range verdict at each of its thresholds: overloaded needs 90% busy
// steps (exactly 90% is enough), more than one step, arrivals strictly
// above completions, queue growth of at least the queue threshold
// (exactly the threshold is enough) and no more KV-bound than queueing
// steps (as many is enough); idle needs strictly more idle than ok steps.
func TestRangeVerdictThresholds(t *testing.T) {
	cases := []struct {
		name  string
		steps []SatStep
		set   models.SaturationSettings
		want  string
	}{
		{"exactly 90% busy steps is overloaded",
			append([]SatStep{okStep()}, growing(9)...), satSet, VerdictOverloaded},
		{"80% busy steps is not overloaded",
			append([]SatStep{okStep(), okStep()}, growing(8)...), satSet, VerdictQueueing},
		{"half the steps queueing with a growing queue is queueing, not overloaded",
			append(repeatSteps(5, func(int) SatStep { return okStep() }), growing(5)...), satSet, VerdictQueueing},
		{"queueing and KV-bound steps together make the busy share",
			append(growing(6), repeatSteps(4, func(i int) SatStep { return kvStep(10 + float64(i)) })...), satSet, VerdictOverloaded},
		{"as many KV-bound as queueing steps is still overloaded",
			append(growing(5), repeatSteps(5, func(i int) SatStep { return kvStep(9 + float64(i)) })...), satSet, VerdictOverloaded},
		{"more KV-bound than queueing steps is KV-bound",
			append(growing(4), repeatSteps(6, func(i int) SatStep { return kvStep(8 + float64(i)) })...), satSet, VerdictKVBound},
		{"one step never shows a queue growing",
			[]SatStep{qStep(5)}, models.SaturationSettings{KVHigh: 0.9, Queue: 0, Preemptions: 0.5, Idle: 0.2}, VerdictQueueing},
		{"arrivals equal to completions is not overloaded",
			repeatSteps(10, func(i int) SatStep { s := qStep(4 + float64(i)); s.Arrivals = 2; return s }), satSet, VerdictQueueing},
		{"queue growth exactly the threshold is overloaded",
			append([]SatStep{{Running: 4, RunningPeak: 4, Arrivals: 3, Completions: 2}}, repeatSteps(9, func(int) SatStep { return qStep(4) })...), satSet, VerdictOverloaded},
		{"queue growth below the threshold is not overloaded",
			repeatSteps(10, func(i int) SatStep { return qStep(4 + float64(i)/3) }), satSet, VerdictQueueing},
		{"a steady queue is queueing, not overloaded",
			repeatSteps(10, func(int) SatStep { return qStep(5) }), satSet, VerdictQueueing},
		{"as many idle as ok steps is ok",
			[]SatStep{okStep(), idleStep(), okStep(), idleStep()}, satSet, VerdictOK},
		{"more idle than ok steps is idle",
			[]SatStep{okStep(), idleStep(), idleStep()}, satSet, VerdictIdle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(tc.steps, tc.set)
			require.Equal(t, tc.want, v.Verdict, "steps %v, reason %q", v.Steps, v.Reason)
		})
	}
}

// Utilisation is running ÷ the range's ceiling per step, and NaN where
// there is no ceiling (no batch peak) or no running value.
func TestClassifyUtilisation(t *testing.T) {
	v := Classify([]SatStep{
		{Running: 2, RunningPeak: 4},
		{Running: 1, RunningPeak: 2},
		{Running: math.NaN(), RunningPeak: 4},
	}, satSet)
	require.Equal(t, 4.0, v.Ceiling)
	require.Equal(t, 0.5, v.Utilisation[0])
	require.Equal(t, 0.25, v.Utilisation[1])
	require.True(t, math.IsNaN(v.Utilisation[2]))

	noPeak := Classify([]SatStep{{Running: 2, RunningPeak: math.NaN()}, {Running: 0, RunningPeak: 0}}, satSet)
	require.Equal(t, 0.0, noPeak.Ceiling)
	for i, u := range noPeak.Utilisation {
		require.True(t, math.IsNaN(u), "step %d: no ceiling, no utilisation (got %v)", i, u)
	}
}

// The means are over the steps (NaN read as 0), and a range without steps
// has means of 0, never NaN, so its reason quotes numbers.
func TestClassifyMeans(t *testing.T) {
	v := Classify([]SatStep{
		{Waiting: 1, Running: 2, RunningPeak: 4, Arrivals: 3, Completions: 4, Preemptions: 0.5, KVUsage: 0.25},
		{Waiting: 3, Running: 6, RunningPeak: 6, Arrivals: 5, Completions: math.NaN(), Preemptions: 0.25, KVUsage: 0.5},
	}, satSet)
	require.Equal(t, 2.0, v.MeanWaiting)
	require.Equal(t, 4.0, v.MeanRunning)
	require.Equal(t, 4.0, v.MeanArrivals)
	require.Equal(t, 2.0, v.MeanCompletions)
	require.Equal(t, 0.375, v.MeanPreemptions)
	require.Equal(t, 0.5, v.PeakKV)

	empty := Classify(nil, satSet)
	require.Equal(t, VerdictIdle, empty.Verdict)
	for name, m := range map[string]float64{"waiting": empty.MeanWaiting, "running": empty.MeanRunning,
		"arrivals": empty.MeanArrivals, "completions": empty.MeanCompletions, "preemptions": empty.MeanPreemptions} {
		require.Equal(t, 0.0, m, name)
	}
	require.NotContains(t, empty.Reason, "NaN")
}

// The queue change per second divides by the window in seconds, written
// exactly (a window of 1.234s is "/ 1.234", not rounded).
func TestSaturationQueuedChangeDividesByWindow(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		want   string
	}{{time.Minute, ") / 60"}, {1234 * time.Millisecond, ") / 1.234"}, {90 * time.Second, ") / 90"}} {
		t.Run(tc.want, func(t *testing.T) {
			for _, s := range (Builder{}).SaturationSignals(models.GroupInstance, models.Filters{}, tc.window) {
				if s.Name == SatQueued {
					require.True(t, strings.HasSuffix(s.Expr, tc.want), s.Expr)
					return
				}
			}
			t.Fatal("no queued_change expression")
		})
	}
}
