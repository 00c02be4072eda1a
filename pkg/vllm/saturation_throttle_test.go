package vllm

import (
	"math"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestThrottleEvidence: a verdict's reason names CPU throttling when the
// worst container was throttled in at least ThrottleEvidence of its CFS
// periods at some step, with the worst share and the count of steps;
// missing (NaN) and lower shares add nothing; the verdict itself does not
// change.
func TestThrottleEvidence(t *testing.T) {
	nan := math.NaN()
	step := func(thr float64) SatStep {
		return SatStep{Waiting: 0, Running: 2, RunningPeak: 4, KVUsage: 0.1, Preemptions: 0, Completions: 1, Arrivals: 1,
			PrefixHitRate: nan, PrefixHitRateBefore: nan, CPUThrottled: thr}
	}
	tests := []struct {
		name string
		thr  []float64
		want string
	}{
		{"no cAdvisor", []float64{nan, nan, nan}, ""},
		{"below the threshold", []float64{0.1, 0.24, 0.2}, ""},
		{"at the threshold", []float64{0.25, 0.1, nan}, "; its container was CPU-throttled beside it (up to 25% of CFS periods, in 1 of 3 steps)"},
		{"worst and count", []float64{0.3, 0.9, 0.5}, "(up to 90% of CFS periods, in 3 of 3 steps)"},
	}
	th := models.DefaultSaturation()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := make([]SatStep, len(tt.thr))
			plain := make([]SatStep, len(tt.thr))
			for i, v := range tt.thr {
				steps[i], plain[i] = step(v), step(nan)
			}
			got, base := Classify(steps, th), Classify(plain, th)
			require.Equal(t, base.Verdict, got.Verdict, "evidence only")
			if tt.want == "" {
				require.Equal(t, base.Reason, got.Reason)
				return
			}
			require.Contains(t, got.Reason, tt.want)
			require.Contains(t, got.Reason, "raises TTFT while the GPU waits")
			require.True(t, len(got.Reason) > len(base.Reason) && got.Reason[:len(base.Reason)] == base.Reason, "appended to the verdict's own reason")
		})
	}
}

func TestSaturationThrottleSignal(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "pod", Identity: []string{"namespace", "pod"}}
	for _, g := range []models.Grouping{models.GroupInstance, models.GroupInstanceEngine, models.GroupModel, models.GroupNone} {
		s, ok := b.SaturationThrottleSignal(g, models.Filters{}, 60e9, models.DefaultContainerSettings())
		require.True(t, ok, "not probed: asked")
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, "%s: %s", g, s.Expr)
		require.Contains(t, s.Expr, "* on (namespace, pod) group_left () max by (namespace, pod) (", "servers joined by identity, whatever the grouping")
		require.Contains(t, s.Expr, "[60s]", "over the rate window")
	}
	fleet := b.FleetContainerSignals(models.Filters{}, "1m", models.DefaultContainerSettings())
	require.Len(t, fleet, 2)
	for _, s := range fleet {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, s.Expr)
		require.Contains(t, s.Expr, "max by (namespace, pod) (group by (namespace, pod) (")
	}
}
