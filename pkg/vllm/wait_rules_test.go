package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestWaitQuantileRules: which recorded quantiles and mean answer a
// waitTime question, by grouping, family, quantile, window and filter.
func TestWaitQuantileRules(t *testing.T) {
	b := Builder{InstanceLabel: "instance"}
	q := []float64{0.5, 0.9, 0.95, 0.99}
	const qt, ttft = "engine:vllm_request_queue_time_seconds:", "engine:vllm_time_to_first_token_seconds:"
	tests := []struct {
		name, family string
		g            models.Grouping
		f            models.Filters
		window       string
		want         RecordedWait
	}{
		{"per server", "queue_time", models.GroupInstance, models.Filters{}, "1m", RecordedWait{Quantiles: map[float64]string{
			0.5: qt + "server_p50_rate1m", 0.9: qt + "server_p90_rate1m", 0.99: qt + "server_p99_rate1m"}, Mean: qt + "server_mean_rate1m"}},
		{"per engine: p99 is engine_p99's", "ttft", models.GroupInstanceEngine, models.Filters{Engines: []string{"0"}}, "5m", RecordedWait{
			Quantiles: map[float64]string{0.5: ttft + "p50_rate5m", 0.9: ttft + "p90_rate5m", 0.99: ttft + "p99_rate5m"}, Mean: ttft + "mean_rate5m"}},
		{"per server with an engine filter", "queue_time", models.GroupInstance, models.Filters{Engines: []string{"0"}}, "1m", RecordedWait{}},
		{"a family not recorded", "itl", models.GroupInstance, models.Filters{}, "1m", RecordedWait{Quantiles: map[float64]string{}}},
		{"a window not recorded", "ttft", models.GroupInstance, models.Filters{}, "2m", RecordedWait{Quantiles: map[float64]string{}}},
		{"by model", "ttft", models.GroupModel, models.Filters{}, "1m", RecordedWait{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, b.WaitQuantileRules("engine:", tt.family, q, tt.g, tt.f, tt.window))
		})
	}
	for _, n := range waitQuantileRuleNames("engine:") {
		g, ok := RuleGroupOf("engine:", n)
		require.True(t, ok)
		require.Equal(t, "vllm.recording.wait_quantiles", g.Name)
	}
	require.Len(t, waitQuantileRuleNames("engine:"), 28, "12 per engine, 16 per server")
}

// TestWaitTimeFromRecordedQuantiles: every quantile and the mean recorded,
// the plan reads no bucket, _sum or _count rate and needs only the
// recorded names it reads; a quantile not recorded reads the bucket rates.
func TestWaitTimeFromRecordedQuantiles(t *testing.T) {
	b := Builder{InstanceLabel: "instance"}
	rec := b.WaitQuantileRules("engine:", "queue_time", []float64{0.5, 0.99}, models.GroupInstance, models.Filters{}, "1m")
	rp, ok := b.WaitTimeFromRules("engine:", "queue_time", []float64{0.5, 0.99}, false, models.GroupInstance, models.Filters{}, "1m", rec)
	require.True(t, ok)
	require.NotContains(t, rp.Expr, "_bucket")
	require.NotContains(t, rp.Expr, "_sum")
	require.Contains(t, rp.Expr, `label_replace(max by (instance) (engine:vllm_request_queue_time_seconds:server_mean_rate1m), "vllm_signal", "mean", "", "")`)
	require.Equal(t, []string{"engine:vllm_request_queue_time_seconds:server_p50_rate1m", "engine:vllm_request_queue_time_seconds:server_p99_rate1m",
		"engine:vllm_request_queue_time_seconds:server_mean_rate1m"}, rp.Names)
	_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
	require.NoError(t, err)
	delete(rec.Quantiles, 0.99)
	rec.Mean = ""
	rp, _ = b.WaitTimeFromRules("engine:", "queue_time", []float64{0.5, 0.99}, false, models.GroupInstance, models.Filters{}, "1m", rec)
	require.Contains(t, rp.Expr, "histogram_quantile(0.99, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m))")
	require.Contains(t, rp.Expr, "sum by (instance) (engine:vllm_request_queue_time_seconds_sum:rate1m)")
	require.Equal(t, []string{"engine:vllm_request_queue_time_seconds_bucket:rate1m", "engine:vllm_request_queue_time_seconds_sum:rate1m",
		"engine:vllm_request_queue_time_seconds_count:rate1m", "engine:vllm_request_queue_time_seconds:server_p50_rate1m"}, rp.Names)
}

// TestWaitQuantileShared: the probe counts recorded series per group over
// the whole range, at its steps, and parses.
func TestWaitQuantileShared(t *testing.T) {
	b := Builder{InstanceLabel: "pod"}
	got := b.WaitQuantileShared("engine:x", models.GroupInstanceEngine, models.Filters{Models: []string{"m"}}, time.Hour+30*time.Second, 30*time.Second)
	require.Equal(t, `count(count by (pod, engine) (last_over_time(engine:x{model_name="m"}[1h30s:30s])) > 1)`, got)
	_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
	require.NoError(t, err)
}

// TestWaitQuantilePairs: one pair per recorded quantile and mean of the grouping,
// both sides parse and read the same window.
func TestWaitQuantilePairs(t *testing.T) {
	b := Builder{InstanceLabel: "instance"}
	for _, g := range []models.Grouping{models.GroupInstance, models.GroupInstanceEngine} {
		pairs := b.WaitQuantilePairs("engine:", g, models.Filters{})
		require.Len(t, pairs, 16, "2 families × (3 quantiles and the mean) × 2 windows")
		for _, p := range pairs {
			for _, e := range []string{p.Raw, p.Rules} {
				_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
				require.NoError(t, err, e)
			}
			window := "[1m]"
			if p.Name[len(p.Name)-2:] == "5m" {
				window = "[5m]"
			}
			require.Contains(t, p.Raw, window, p.Name)
		}
	}
	require.Empty(t, b.WaitQuantilePairs("engine:", models.GroupModel, models.Filters{}))
}
