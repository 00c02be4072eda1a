package vllm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestClassifyStep(t *testing.T) {
	th := models.DefaultSaturation()
	nan := math.NaN()
	tests := []struct {
		name    string
		step    SatStep
		ceiling float64
		want    string
	}{
		{"preempting with KV full", SatStep{Waiting: 30, Running: 10, KVUsage: 0.97, Preemptions: 0.5}, 10, VerdictKVBound},
		{"KV full without preemptions queues", SatStep{Waiting: 30, Running: 10, KVUsage: 0.97, Preemptions: 0}, 10, VerdictQueueing},
		{"preemptions below their threshold", SatStep{Waiting: 3, Running: 10, KVUsage: 0.95, Preemptions: 0.005}, 10, VerdictQueueing},
		{"preemptions with KV room", SatStep{Waiting: 0, Running: 5, KVUsage: 0.5, Preemptions: 1}, 10, VerdictOK},
		{"queue at its threshold", SatStep{Waiting: 1, Running: 4, KVUsage: 0.1}, 4, VerdictQueueing},
		{"queue below its threshold", SatStep{Waiting: 0.99, Running: 4, KVUsage: 0.1}, 4, VerdictOK},
		{"running under a tenth of the ceiling", SatStep{Waiting: 0, Running: 0.9, KVUsage: 0.01}, 10, VerdictIdle},
		{"running at a tenth of the ceiling", SatStep{Waiting: 0, Running: 1, KVUsage: 0.01}, 10, VerdictOK},
		{"nothing ever ran", SatStep{Waiting: nan, Running: nan, KVUsage: nan, Preemptions: nan}, 0, VerdictIdle},
		{"missing KV series is not KV-bound", SatStep{Waiting: 5, Running: 8, KVUsage: nan, Preemptions: 2}, 8, VerdictQueueing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, ClassifyStep(tt.step, tt.ceiling, th))
		})
	}
}

func TestClassify(t *testing.T) {
	th := models.DefaultSaturation()
	steps := func(n int, f func(i int) SatStep) []SatStep {
		out := make([]SatStep, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	tests := []struct {
		name, want string
		steps      []SatStep
		reason     []string
	}{
		{name: "growing queue at every step is overloaded", want: VerdictOverloaded,
			steps: steps(10, func(i int) SatStep {
				return SatStep{Waiting: float64(10 + 10*i), Running: 4, RunningPeak: 4, KVUsage: 0.1, Arrivals: 16, Completions: 4}
			}),
			reason: []string{"arrivals 16.00/s exceed completions 4.00/s", "add replicas"}},
		{name: "a steady queue queues", want: VerdictQueueing,
			steps: steps(10, func(i int) SatStep {
				return SatStep{Waiting: 5, Running: 4, RunningPeak: 4, KVUsage: 0.1, Arrivals: 4, Completions: 4}
			}),
			reason: []string{"mean queue 5.0 requests (threshold 1) in 100% of steps", "running 4.0 of a 4-request ceiling"}},
		{name: "preempting in a quarter of the steps is KV-bound", want: VerdictKVBound,
			steps: steps(8, func(i int) SatStep {
				if i < 2 {
					return SatStep{Waiting: 9, Running: 9, RunningPeak: 10, KVUsage: 0.99, Preemptions: 2, Arrivals: 5, Completions: 5}
				}
				return SatStep{Waiting: 0, Running: 6, RunningPeak: 7, KVUsage: 0.5, Arrivals: 5, Completions: 5}
			}),
			reason: []string{"KV cache peaked at 99% (threshold 90%)", "in 25% of steps", "lower max-num-seqs"}},
		{name: "a short queue is ok", want: VerdictOK,
			steps: steps(8, func(i int) SatStep {
				w := 0.0
				if i == 3 {
					w = 4
				}
				return SatStep{Waiting: w, Running: 6, RunningPeak: 8, KVUsage: 0.3, Arrivals: 5, Completions: 5}
			}),
			reason: []string{"running averages 6.0 of a 8-request peak"}},
		{name: "mostly nothing running is idle", want: VerdictIdle,
			steps: steps(10, func(i int) SatStep {
				if i == 0 {
					return SatStep{Running: 1, RunningPeak: 1}
				}
				return SatStep{Running: 0, RunningPeak: 0}
			}),
			reason: []string{"running averages 0.10 of a 1-request peak (idle threshold 10%)"}},
		{name: "no steps", want: VerdictIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(tt.steps, th)
			require.Equal(t, tt.want, v.Verdict, v.Reason)
			for _, r := range tt.reason {
				require.Contains(t, v.Reason, r)
			}
			require.Len(t, v.Steps, len(tt.steps))
		})
	}
}

func TestSaturationAndFleetPromQLParse(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Resolution: "1s"}
	f := models.Filters{Models: []string{`a"b`}, Labels: mustMatchers(t, `namespace="x"`)}
	var exprs []SignalExpr
	exprs = append(exprs, b.SaturationSignals(models.GroupInstanceEngine, f, 4e9)...)
	exprs = append(exprs, b.FleetSignals(f, "4s", "1h")...)
	for _, s := range exprs {
		t.Run(s.Name, func(t *testing.T) {
			require.NotEmpty(t, allSelectors(t, s.Expr))
			if s.Name != FleetUp {
				require.Contains(t, s.Expr, `namespace="x"`)
				require.Contains(t, s.Expr, `model_name="a\"b"`)
			}
		})
	}
}
