package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestSLOFromRules: each slo signal on rules is its raw expression with
// the recorded per-engine rates (the numerator under the objective's
// bound) in place of the raw rates, summed by the same grouping; the
// attainment and budget only over a recorded window; nothing for a bound
// or family the rules do not count, or a grouping they sum away.
func TestSLOFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	f := models.Filters{Labels: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "model_name", "m")}}
	raws := map[SignalKey][2]string{
		TTFT:           {`rate(vllm:time_to_first_token_seconds_bucket{model_name="m", le=~"1|1\\.0"}[%w])`, `rate(vllm:time_to_first_token_seconds_count{model_name="m"}[%w])`},
		RequestSuccess: {`rate(vllm:request_success_total{model_name="m", finished_reason="error"}[%w])`, `rate(vllm:request_success_total{model_name="m"}[%w])`},
	}
	tests := []struct {
		name   string
		o      Objective
		g      models.Grouping
		want   []string // signals on rules
		record [2]string
	}{
		{"ttft over 28d: the burn pairs", Objective{Key: TTFT, Bound: 1, Target: 0.99, Window: "28d"}, models.GroupModel,
			[]string{"burn_1h_5m", "burn_6h_30m", "burn_1d_2h", "burn_3d_6h"},
			[2]string{`engine:vllm_time_to_first_token_seconds_slo_good:rate%w{model_name="m", bound="1"}`, `engine:vllm_time_to_first_token_seconds_slo_total:rate%w{model_name="m"}`}},
		{"availability over 1d: every signal", Availability(0.999, "24h"), models.GroupInstance,
			[]string{"attainment", "error_budget_left", "burn_1h_5m", "burn_6h_30m", "burn_1d_2h", "burn_3d_6h"},
			[2]string{`engine:vllm_request_success_slo_errors:rate%w{model_name="m"}`, `engine:vllm_request_success_slo_total:rate%w{model_name="m"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := b.SLOFromRules("engine:", tt.o, tt.g, f)
			require.ElementsMatch(t, tt.want, keys(got))
			raw := map[string]string{}
			for _, s := range b.SLOSignals(tt.o, tt.g, f) {
				raw[s.Name] = s.Expr
			}
			for sig, rp := range got {
				_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
				require.NoError(t, err, rp.Expr)
				back := rp.Expr
				for _, n := range rp.Names {
					require.Contains(t, RuleNames("engine:"), n)
					w := n[strings.LastIndex(n, ":rate")+len(":rate"):]
					rawW := w
					if w == "1d" && sig == "attainment" || w == "1d" && sig == "error_budget_left" {
						rawW = "24h"
					}
					for i := range 2 {
						back = strings.ReplaceAll(back, strings.ReplaceAll(tt.record[i], "%w", w), strings.ReplaceAll(raws[tt.o.Key][i], "%w", rawW))
					}
				}
				require.Equal(t, raw[sig], back, sig)
			}
		})
	}
	require.Nil(t, b.SLOFromRules("engine:", Objective{Key: TTFT, Bound: 0.5, Target: 0.99, Window: "28d"}, models.GroupModel, f), "another bound")
	require.Equal(t, "the slo rules count requests under the default bound 1, not 0.5", SLORulesWhy(Objective{Key: TTFT, Bound: 0.5}))
	require.Nil(t, b.SLOFromRules("engine:", Objective{Key: E2E, Bound: 1, Target: 0.99, Window: "28d"}, models.GroupModel, f), "e2e")
	require.Nil(t, b.SLOFromRules("engine:", Availability(0.99, "1d"), models.GroupRole, f), "roles are summed away")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSLORulesWhyQuotesTheBoundAsWritten: the reason the slo rules cannot
// answer an objective quotes its bound in the shortest spelling, as the
// user wrote it, beside the rules' own.
func TestSLORulesWhyQuotesTheBoundAsWritten(t *testing.T) {
	tests := []struct {
		o    Objective
		want string
	}{
		{Objective{Key: TTFT, Bound: 0.25}, "the slo rules count requests under the default bound 1, not 0.25"},
		{Objective{Key: TTFT, Bound: 2}, "the slo rules count requests under the default bound 1, not 2"},
		{Objective{Key: ITL, Bound: 0.125}, "the slo rules count requests under the default bound 0.1, not 0.125"},
		{Objective{Key: TTFT, Bound: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, SLORulesWhy(tt.o))
		})
	}
}
