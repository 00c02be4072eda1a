package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestFleetFromRules: the recorded twins of the fleet signals keep the raw
// expressions' shape (same aggregation, engine labels and matchers) and
// read the recorded window; without a recorded window only the gauges are
// read from rules.
func TestFleetFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	f := models.Filters{Models: []string{"m"}}
	got := b.FleetFromRules("engine:", f, "60s")
	want := map[string]string{
		FleetRunning:     `sum by (instance, engine, model_name) (engine:vllm_num_requests_running:sum{model_name="m"})`,
		FleetWaiting:     `sum by (instance, engine, model_name) (engine:vllm_num_requests_waiting:sum{model_name="m"})`,
		FleetKVUsage:     `max by (instance, engine, model_name) (engine:vllm_kv_cache_usage_perc:max{model_name="m"})`,
		FleetPreemptions: `60 * sum by (instance, engine, model_name) (engine:vllm_num_preemptions:rate1m{model_name="m"})`,
		FleetRequests:    `sum by (instance, engine, model_name) (engine:vllm_request_success:rate1m{model_name="m"})`,
		FleetFailed:      `sum by (instance, engine, model_name) (engine:vllm_request_success:rate1m{model_name="m", finished_reason=~"abort|error"})`,
		FleetGenTokens:   `sum by (instance, engine, model_name) (engine:vllm_generation_tokens:rate1m{model_name="m"})`,
		FleetQueueP99:    `histogram_quantile(0.99, sum by (le, instance, engine, model_name) (engine:vllm_request_queue_time_seconds_bucket:rate1m{model_name="m"}))`,
		FleetTTFTP99:     `histogram_quantile(0.99, sum by (le, instance, engine, model_name) (engine:vllm_time_to_first_token_seconds_bucket:rate1m{model_name="m"}))`,
	}
	require.Len(t, got, len(want))
	for sig, expr := range want {
		require.Equal(t, expr, got[sig].Expr, sig)
		_, err := parser.NewParser(parser.Options{}).ParseExpr(got[sig].Expr)
		require.NoError(t, err, sig)
		require.Len(t, got[sig].Names, 1)
		require.Contains(t, RuleNames("engine:"), got[sig].Names[0])
	}
	gauges := b.FleetFromRules("engine:", f, "75s")
	require.Len(t, gauges, 3, "only the gauges without a recorded window")
	require.Contains(t, gauges, FleetRunning)
}
