package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestTopKRankingPart: a part of a mixed ranking aggregates the same
// per-group expression as the whole-range ranking over the part's
// subquery, without topk; avg as its sum and count, tagged; last has no
// parts. The recorded part reads the rules' series.
func TestTopKRankingPart(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	f := models.Filters{Models: []string{"m"}}
	tests := []struct {
		name, rankBy, aggregation, prefix string
		want                              string
		ok                                bool
	}{
		{"raw max of waiting", "waiting", "max", "",
			`max_over_time((sum by (instance) (vllm:num_requests_waiting{model_name="m"}))[2370s:30s])`, true},
		{"raw avg of running: sum and count", "running", "avg", "",
			`label_replace(sum_over_time((sum by (instance) (vllm:num_requests_running{model_name="m"}))[2370s:30s]), "vllm_signal", "sum", "", "") or ` +
				`label_replace(count_over_time((sum by (instance) (vllm:num_requests_running{model_name="m"}))[2370s:30s]), "vllm_signal", "count", "", "")`, true},
		{"recorded max of waiting", "waiting", "max", "engine:",
			`max_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum{model_name="m"}))[2370s:30s])`, true},
		{"recorded avg of the queue-time p99", "wait_p99", "avg", "engine:",
			`label_replace(sum_over_time((histogram_quantile(0.99, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m{model_name="m"})))[2370s:30s]), "vllm_signal", "sum", "", "") or ` +
				`label_replace(count_over_time((histogram_quantile(0.99, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m{model_name="m"})))[2370s:30s]), "vllm_signal", "count", "", "")`, true},
		{"last has no parts", "waiting", "last", "", "", false},
		{"recorded last has no parts", "waiting", "last", "engine:", "", false},
		{"a signal no rule records", "kv_usage", "max", "engine:", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			var ok bool
			if tt.prefix == "" {
				x, err := b.TopKRankingPart(tt.rankBy, tt.aggregation, models.GroupInstance, f, "60s", "2370s", "30s")
				got, ok = x, err == nil
			} else {
				rp, found := b.TopKRankingPartFromRules(tt.prefix, tt.rankBy, tt.aggregation, models.GroupInstance, f, "60s", "2370s", "30s")
				got, ok = rp.Expr, found
				if found {
					require.Len(t, rp.Names, 1)
					require.Contains(t, RuleNames(tt.prefix), rp.Names[0])
				}
			}
			require.Equal(t, tt.ok, ok)
			if !tt.ok {
				return
			}
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
	_, err := b.TopKRankingPart("nope", "max", models.GroupInstance, f, "60s", "1h", "30s")
	require.ErrorContains(t, err, `rankBy "nope" is unknown`)
}
