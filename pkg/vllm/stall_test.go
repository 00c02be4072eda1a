package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestStalledMatchesTheAlert: the stall expression is the alert's
// condition: busy throughout the window, unless a progress counter moved,
// unless asleep in it, and only while up; it parses.
func TestStalledMatchesTheAlert(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	got := b.Stalled(b.EngineLabels(), models.Filters{}, 3*time.Minute)
	_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
	require.NoError(t, err, got)
	want := "((sum by (instance, engine, model_name) (min_over_time(vllm:num_requests_running[180s])) + " +
		"sum by (instance, engine, model_name) (min_over_time(vllm:num_requests_waiting[180s]))) > 0 " +
		"unless on (instance, engine, model_name) (" +
		"sum by (instance, engine, model_name) (increase(vllm:generation_tokens_total[180s])) > 0 or " +
		"sum by (instance, engine, model_name) (increase(vllm:prompt_tokens_total[180s])) > 0 or " +
		"sum by (instance, engine, model_name) (increase(vllm:request_success_total[180s])) > 0) " +
		"unless on (instance, engine, model_name) (max by (instance, engine, model_name) " +
		"(max_over_time(vllm:engine_sleep_state{sleep_state!=\"awake\"}[180s])) == 1)) " +
		"and on (instance, engine, model_name) group by (instance, engine, model_name) " +
		"(vllm:generation_tokens_total or vllm:prompt_tokens_total or vllm:request_success_total) " +
		"and on (instance) (min by (instance) (up) == 1)"
	require.Equal(t, want, got)
	for _, s := range b.FleetStallSignals(models.Filters{}, 90*time.Second) {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, s.Expr)
	}
	require.Equal(t, `max by (instance, engine, model_name) (vllm:engine_sleep_state{sleep_state!="awake"})`,
		b.FleetStallSignals(models.Filters{}, time.Minute)[1].Expr)
}

// TestHealthStalledNeedsHistory: the fleet table's (and the health
// check's, the same) stall expression is the alert's condition kept to
// engines that reported before the window began; the sleep expression is
// unguarded; both parse, with every prefix. The saturation verdict's is
// kept the same way, per its grouping.
func TestHealthStalledNeedsHistory(t *testing.T) {
	tests := []struct {
		name   string
		b      Builder
		suffix string
	}{
		{name: "one prefix", b: Builder{Prefix: "vllm:", InstanceLabel: "instance"},
			suffix: ") and on (instance, engine, model_name) group by (instance, engine, model_name) " +
				"(count_over_time(vllm:num_requests_running[180s] offset 180s))"},
		{name: "every prefix", b: Builder{Prefix: "vllm:", Prefixes: []string{"vllm:", "ray_vllm:"}, InstanceLabel: "instance"},
			suffix: ") and on (instance, engine, model_name) group by (instance, engine, model_name) " +
				"(count_over_time(vllm:num_requests_running[180s] offset 180s) or count_over_time(ray_vllm:num_requests_running[180s] offset 180s))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			el := tt.b.EngineLabels()
			got := tt.b.FleetStallSignals(models.Filters{}, 3*time.Minute)
			require.Equal(t, got, tt.b.HealthStallSignals(models.Filters{}, 3*time.Minute), "health names the engines the table does")
			require.Equal(t, FleetStalled, got[0].Name)
			require.Equal(t, "("+tt.b.Stalled(el, models.Filters{}, 3*time.Minute)+tt.suffix, got[0].Expr)
			require.Equal(t, `max by (instance, engine, model_name) (`+tt.b.sleepUnion(models.Filters{}, "", "")+`)`, got[1].Expr)
			sat := tt.b.SaturationStallSignal(models.GroupInstance, models.Filters{}, 3*time.Minute)
			require.Equal(t, "("+tt.b.Stalled([]string{"instance"}, models.Filters{}, 3*time.Minute)+
				strings.ReplaceAll(tt.suffix, "instance, engine, model_name", "instance"), sat.Expr)
			for _, s := range got {
				_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
				require.NoError(t, err, s.Expr)
			}
		})
	}
}
