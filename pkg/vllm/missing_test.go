package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestActivityProbes: the probes read a histogram by its _count series
// and a counter by itself, across wire names, under the filters.
func TestActivityProbes(t *testing.T) {
	b := Builder{Prefix: "vllm:"}
	samples, inc := b.ActivityProbes(QueueTime, models.Filters{Models: []string{"m"}}, "1h5m")
	require.Equal(t, `max(count_over_time({__name__=~"vllm:request_queue_time_seconds_count", model_name="m"}[1h5m]))`, samples)
	require.Equal(t, `sum(increase({__name__=~"vllm:request_queue_time_seconds_count", model_name="m"}[1h5m]))`, inc)
	samples, _ = b.ActivityProbes(Preemptions, models.Filters{}, "5m")
	require.Equal(t, `max(count_over_time({__name__=~"vllm:num_preemptions_total"}[5m]))`, samples)
	for _, e := range []string{samples, inc} {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
		require.NoError(t, err)
	}
}

// TestEnginesInRange: the engines that reported in the lookback, each
// wire name under its own last_over_time (a range takes only a selector).
func TestEnginesInRange(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		name string
		b    Builder
		f    models.Filters
		want string
	}{
		{"default", b, models.Filters{}, `count(last_over_time(vllm:num_requests_running[1h5m]))`},
		{"filtered", b, models.Filters{Models: []string{"m"}, Engines: []string{"0"}},
			`count(last_over_time(vllm:num_requests_running{model_name="m", engine="0"}[1h5m]))`},
		{"two prefixes", profileBuilder(models.ProfileKServe), models.Filters{},
			`count((last_over_time(kserve_vllm:num_requests_running[1h5m]) or on (namespace, pod) last_over_time(vllm:num_requests_running[1h5m])))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.EnginesInRange(tt.f, "1h5m")
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}

// TestAbsenceText: only an absent series is called not exported.
func TestAbsenceText(t *testing.T) {
	tests := []struct {
		name string
		key  SignalKey
		a    Activity
		want string
	}{
		{"absent", QueueTime, Activity{}, "export no vllm:request_queue_time_seconds"},
		{"young", TTFT, Activity{Samples: 1}, "too little history for a rate"},
		{"idle", E2E, Activity{Samples: 40}, "none finished (the engines were idle, or stuck)"},
		{"idle gaps", ITL, Activity{Samples: 40}, "no request produced a second token"},
		{"flat counter", Preemptions, Activity{Samples: 40}, "did not change"},
		{"active", QueueTime, Activity{Samples: 40, Increase: 3}, "changed in this time range, yet this query's answer holds none of it"},
		{"a gauge that exists", Running, Activity{Samples: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AbsenceText(tt.key, "vllm:", "x", "2m", tt.a)
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tt.want)
		})
	}
}
