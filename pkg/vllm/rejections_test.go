package vllm

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestRejectedSignals: the queue's and saturation's rejected expressions
// are asked only of fleets where detection found admission_rejections_total
// (or found nothing at all), group by reason as well, and parse.
func TestRejectedSignals(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  bool
	}{
		{"0.32 engine", []string{"vllm:num_requests_running", "vllm:admission_rejections_total"}, true},
		{"older V1 and V0 only", []string{"vllm:num_requests_running", "vllm:num_requests_swapped", "vllm:kv_cache_usage_perc"}, false},
		{"detection found nothing", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: Detect(tt.names, "vllm:")}
			q, ok := b.QueueRejected(models.GroupInstanceEngine, models.Filters{}, "1m")
			require.Equal(t, tt.want, ok)
			s, ok2 := b.SaturationRejected(models.GroupInstance, models.Filters{}, time.Minute)
			require.Equal(t, tt.want, ok2)
			if !ok {
				return
			}
			require.Equal(t, QueueRejectedSignal, q.Name)
			require.Contains(t, q.Expr, "sum by (instance, engine, reason)")
			require.Contains(t, q.Expr, "rate(vllm:admission_rejections_total")
			require.Contains(t, s.Expr, "sum by (instance, reason)")
			for _, e := range []string{q.Expr, s.Expr} {
				require.NotEmpty(t, allSelectors(t, e), e) // parses with Prometheus's parser
			}
		})
	}
}

// rejStep is a step refusing r requests/s with a short queue.
func rejStep(r float64) SatStep {
	return SatStep{Waiting: 2, Running: 4, RunningPeak: 4, KVUsage: 0.5, Arrivals: 2, Completions: 2, Rejected: r}
}

// TestRejectingVerdict: any rejection makes a step "rejecting", above
// queueing and below KV-bound; NaN (no such family) and 0 are not
// rejecting; the range verdict follows the usual quarter rule and its
// reason quotes the rate and the in-flight peak.
func TestRejectingVerdict(t *testing.T) {
	tests := []struct {
		name  string
		steps []SatStep
		want  string
	}{
		{"rejecting with a short queue", repeatSteps(4, func(int) SatStep { return rejStep(3) }), VerdictRejecting},
		{"rejecting outranks queueing", repeatSteps(4, func(int) SatStep { s := qStep(9); s.Rejected = 0.5; return s }), VerdictRejecting},
		{"KV-bound outranks rejecting", repeatSteps(4, func(int) SatStep { s := kvStep(2); s.Rejected = 0.5; return s }), VerdictKVBound},
		{"no family is not rejecting", repeatSteps(4, func(int) SatStep { s := okStep(); s.Rejected = math.NaN(); return s }), VerdictOK},
		{"zero is not rejecting", repeatSteps(4, func(int) SatStep { s := okStep(); s.Rejected = 0; return s }), VerdictOK},
		{"a quarter of the steps is enough", append(repeatSteps(3, func(int) SatStep { return okStep() }), rejStep(1)), VerdictRejecting},
		{"under a quarter is not", append(repeatSteps(4, func(int) SatStep { return okStep() }), rejStep(1)), VerdictOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(tt.steps, satSet)
			require.Equal(t, tt.want, v.Verdict)
		})
	}
	v := Classify(repeatSteps(2, func(i int) SatStep { return rejStep(float64(2 + 2*i)) }), satSet)
	require.Equal(t, 3.0, v.MeanRejected)
	require.Equal(t, 6.0, v.PeakInFlight)
	require.Contains(t, v.Reason, "refused 3.00 requests/s at the queue limit in 100% of steps")
	require.Contains(t, v.Reason, "waiting + running up to 6.0 while refusing")
}

// TestPreemptionsPerRequest: the four per-request expressions parse, read
// request_num_preemptions' count, sum and le="1" bucket under either
// spelling of the bound, and match per group.
func TestPreemptionsPerRequest(t *testing.T) {
	for _, g := range []models.Grouping{models.GroupNone, models.GroupInstance, models.GroupInstanceEngine} {
		t.Run(string(g), func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
			sigs := b.PreemptionsPerRequest(g, models.Filters{Models: []string{"m"}}, "30s")
			names := []string{}
			for _, s := range sigs {
				names = append(names, s.Name)
				sel := allSelectors(t, s.Expr)
				require.NotEmpty(t, sel, s.Expr)
				require.Contains(t, PerRequestUnits, s.Name)
			}
			require.Equal(t, []string{PerRequestMoreThanOnce, PerRequestAtLeastOnceMax, PerRequestMean, PerRequestP99}, names)
			require.Contains(t, sigs[0].Expr, `vllm:request_num_preemptions_bucket{model_name="m", le=~"1(\\.0)?"}`)
			require.Contains(t, sigs[1].Expr, "clamp_max(")
			require.Contains(t, sigs[2].Expr, "rate(vllm:request_num_preemptions_sum")
			require.Contains(t, sigs[3].Expr, "histogram_quantile(0.99, sum by (le")
			if g != models.GroupNone {
				require.Contains(t, sigs[0].Expr, "/ on (instance")
			}
		})
	}
}

// TestPeakInFlightCountsOnlyRefusingSteps: the in-flight peak the
// rejecting reason quotes is taken over the steps that refused requests;
// a longer queue at a step that refused none, or where the rejection
// family is absent, is not the level at which the engine refuses.
func TestPeakInFlightCountsOnlyRefusingSteps(t *testing.T) {
	tests := []struct {
		name  string
		other SatStep
	}{
		{"a step that refused none", qStep(20)},
		{"a step without the rejection family", func() SatStep { s := qStep(20); s.Rejected = math.NaN(); return s }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := append(repeatSteps(3, func(int) SatStep { return rejStep(1) }), tt.other)
			v := Classify(steps, satSet)
			require.Equal(t, VerdictRejecting, v.Verdict)
			require.Equal(t, 6.0, v.PeakInFlight, "waiting 2 + running 4 at the refusing steps")
			require.Contains(t, v.Reason, "waiting + running up to 6.0 while refusing")
		})
	}
}
