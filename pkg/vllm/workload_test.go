package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

var workloadGroupings = []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine}

// nasty are filter values that must stay literal label values.
var nasty = models.Filters{Models: []string{`a"b`, `c\`, `.*`}, Instances: []string{"h:1\n"}}

// TestHistogramBuckets: the distribution sums the cumulative buckets of both
// generations' names by le and the grouping, and scales the rate to counts
// per step; no bound is written into it.
func TestHistogramBuckets(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	for _, g := range workloadGroupings {
		for view, key := range WorkloadFamilies {
			t.Run(string(g)+"/"+view, func(t *testing.T) {
				expr := b.HistogramBuckets(key, g, nasty, "1m", 30*time.Second, false)
				e := parse(t, expr)
				bin, ok := e.(*parser.BinaryExpr)
				require.True(t, ok, "sum(...) * step: %s", expr)
				require.Equal(t, "30", bin.RHS.String(), "counts per 30 s step")
				sum := unparen(bin.LHS).(*parser.AggregateExpr)
				require.Equal(t, append([]string{"le"}, b.GroupLabels(g)...), sum.Grouping)
				require.Contains(t, sum.Expr.String(), "[1m]", "rate over the rate window")
				exact := b.HistogramBuckets(key, g, nasty, "1m", 30*time.Second, true)
				esum := parse(t, exact).(*parser.AggregateExpr)
				require.Equal(t, sum.Grouping, esum.Grouping)
				call := unparen(esum.Expr).(*parser.Call)
				require.Equal(t, "increase", call.Func.Name, "the increase over exactly one step")
				require.Equal(t, 30*time.Second, call.Args[0].(*parser.MatrixSelector).Range)
				require.Equal(t, []string{"vllm:" + string(key) + "_bucket"}, metricNames(t, e))
				require.NotContains(t, expr, "le=", "no bucket bound is assumed")
				for _, vs := range allSelectors(t, expr) {
					requireMatchesExactly(t, vs, "model_name", nasty.Models)
					requireMatchesExactly(t, vs, "instance", nasty.Instances)
				}
			})
		}
	}
}

// TestWorkloadSignals: means are rate(sum)/rate(count) of each histogram,
// the error share divides the error reason by all reasons, and every
// expression parses with the filters escaped.
func TestWorkloadSignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	for _, g := range workloadGroupings {
		t.Run(string(g), func(t *testing.T) {
			sigs := b.WorkloadSignals(g, nasty, "1m")
			names := make([]string, len(sigs))
			for i, s := range sigs {
				names[i] = s.Name
				for _, vs := range allSelectors(t, s.Expr) {
					requireMatchesExactly(t, vs, "model_name", nasty.Models)
				}
			}
			require.Equal(t, []string{WorkloadPromptMean, WorkloadGenerationMean, WorkloadRequests, ErrorShare}, names, "no gateway signal without a picker")
			prompt := parse(t, sigs[0].Expr).(*parser.BinaryExpr)
			require.Equal(t, parser.ItemType(parser.DIV), prompt.Op)
			require.Contains(t, prompt.LHS.String(), "vllm:request_prompt_tokens_sum")
			require.Contains(t, prompt.RHS.String(), "vllm:request_prompt_tokens_count")
			require.Contains(t, sigs[1].Expr, "vllm:request_generation_tokens_sum")
			share := parse(t, sigs[3].Expr).(*parser.BinaryExpr)
			require.Equal(t, parser.ItemType(parser.DIV), share.Op)
			require.Contains(t, share.LHS.String(), `finished_reason="error"`)
			require.NotContains(t, share.RHS.String(), "finished_reason", "the denominator is every finished request")
			require.Equal(t, b.GroupLabels(g), unparen(share.RHS).(*parser.AggregateExpr).Grouping)
		})
	}
}

// TestGatewayErrorShare: with a picker, its own error share per model
// joins the tokens view, current and legacy names each summed before the
// union (they carry different labels), errors defaulting to 0 where the
// picker routed requests but has failed none yet; groupings the picker
// does not know get none.
func TestGatewayErrorShare(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "pod", Gateway: true, GatewayPrefixes: []string{"", "kserve_"}}
	tests := []struct {
		g    models.Grouping
		want bool
	}{
		{models.GroupNone, true}, {models.GroupModel, true}, {models.GroupInstance, false}, {models.GroupInstanceEngine, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.g), func(t *testing.T) {
			expr := b.GatewayErrorShare(tt.g, models.Filters{Models: []string{`m"1`}}, "2m")
			sigs := b.WorkloadSignals(tt.g, models.Filters{}, "2m")
			if !tt.want {
				require.Empty(t, expr)
				require.Len(t, sigs, 4)
				return
			}
			require.Equal(t, GatewayErrorShare, sigs[len(sigs)-1].Name)
			e := parse(t, expr)
			require.Equal(t, []string{
				"inference_objective_request_error_total", "inference_objective_request_total",
				"kserve_inference_objective_request_error_total", "kserve_inference_objective_request_total",
				"kserve_llm_d_epp_request_error_total", "kserve_llm_d_epp_request_total",
				"llm_d_epp_request_error_total", "llm_d_epp_request_total",
			}, metricNames(t, e))
			require.Contains(t, expr, " or 0 * ", "no error series yet means a share of 0")
			for _, vs := range allSelectors(t, expr) {
				requireMatchesExactly(t, vs, "model_name", []string{`m"1`})
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				if bin, ok := n.(*parser.BinaryExpr); ok && bin.Op == parser.LOR {
					for _, side := range []parser.Expr{bin.LHS, bin.RHS} {
						if _, isAgg := unparen(side).(*parser.AggregateExpr); !isAgg && !strings.Contains(side.String(), "0 *") {
							if _, nested := unparen(side).(*parser.BinaryExpr); !nested {
								t.Fatalf("union of unsummed series: %s", side)
							}
						}
					}
				}
				return nil
			})
		})
	}
}

// TestAvailabilitySignals: an availability objective has the latency
// objectives' outputs and windows, over 1 − the error share.
func TestAvailabilitySignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	for _, g := range workloadGroupings {
		t.Run(string(g), func(t *testing.T) {
			sigs := b.SLOSignals(Availability(0.999, "28d"), g, nasty)
			names := make([]string, len(sigs))
			for i, s := range sigs {
				names[i] = s.Name
				require.NotContains(t, s.Expr, "le=", s.Name)
				require.Contains(t, s.Expr, `finished_reason="error"`, s.Name)
				for _, vs := range allSelectors(t, s.Expr) {
					require.Equal(t, "vllm:request_success_total", vs.Name)
					requireMatchesExactly(t, vs, "model_name", nasty.Models)
				}
			}
			require.Equal(t, models.SLOSignals, names)
			require.Contains(t, sigs[0].Expr, "[28d]")
			require.True(t, strings.HasPrefix(sigs[0].Expr, "(1 - ("), sigs[0].Expr)
			require.Contains(t, sigs[1].Expr, ") / 0.001", "error budget is 1 - target")
			require.Contains(t, sigs[2].Expr, "[1h]")
			require.Contains(t, sigs[2].Expr, "[5m]")
		})
	}
}

// TestBoundCarriers: both probes parse and count engines, one per bound.
func TestBoundCarriers(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	per, total := b.BoundCarriers(RequestPromptTokens, nasty)
	pe := parse(t, per).(*parser.AggregateExpr)
	require.Equal(t, []string{"le"}, pe.Grouping)
	require.Equal(t, parser.ItemType(parser.COUNT), pe.Op)
	te := parse(t, total).(*parser.AggregateExpr)
	require.Empty(t, te.Grouping)
	require.Contains(t, total, "request_prompt_tokens_count")
}

func TestErrorShareText(t *testing.T) {
	require.Contains(t, ErrorShareText(false), "Client aborts never reach vLLM's finished-request metrics")
	require.NotContains(t, ErrorShareText(false), "gateway_error_share")
	require.Contains(t, ErrorShareText(true), "gateway_error_share")
}
