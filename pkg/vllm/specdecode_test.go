package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

var allGroupings = []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine}

// TestSpecDecodeSignalsParseAndEscape: every expression parses under every
// builder and grouping, reads only the spec-decode counters, and matches
// the filter values literally.
func TestSpecDecodeSignalsParseAndEscape(t *testing.T) {
	for bname, b := range builders() {
		for _, g := range allGroupings {
			for _, v := range nastyValues {
				f := models.Filters{Models: []string{v}, Instances: []string{v, "other"}, Engines: []string{"0"}}
				for _, s := range b.SpecDecodeSignals(g, f, "1m0s") {
					t.Run(bname+"/"+string(g)+"/"+s.Name+"/"+v, func(t *testing.T) {
						sels := allSelectors(t, s.Expr)
						require.NotEmpty(t, sels)
						for _, vs := range sels {
							require.True(t, strings.HasPrefix(vs.Name, b.Prefix+"spec_decode_"), vs.Name)
							requireMatchesExactly(t, vs, "model_name", []string{v})
							requireMatchesExactly(t, vs, b.InstanceLabel, []string{v, "other"})
							requireMatchesExactly(t, vs, "engine", []string{"0"})
						}
					})
				}
			}
		}
	}
}

// TestSpecDecodeExpressions pins the ratios: sums of rates per group, the
// denominator filtered to positive rates (no division by zero), the bonus
// token in the mean length, and positions divided by their group's drafts.
func TestSpecDecodeExpressions(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		g    models.Grouping
		want map[string]string
	}{
		{models.GroupInstance, map[string]string{
			SpecAcceptanceRate: `sum by (instance) (rate(vllm:spec_decode_num_accepted_tokens_total[1m])) / (sum by (instance) (rate(vllm:spec_decode_num_draft_tokens_total[1m])) > 0)`,
			SpecMeanLength:     `1 + sum by (instance) (rate(vllm:spec_decode_num_accepted_tokens_total[1m])) / (sum by (instance) (rate(vllm:spec_decode_num_drafts_total[1m])) > 0)`,
			SpecPositionSignal: `sum by (instance, position) (rate(vllm:spec_decode_num_accepted_tokens_per_pos_total[1m])) / on (instance) group_left () (sum by (instance) (rate(vllm:spec_decode_num_drafts_total[1m])) > 0)`,
		}},
		{models.GroupNone, map[string]string{
			SpecAcceptanceRate: `sum(rate(vllm:spec_decode_num_accepted_tokens_total[1m])) / (sum(rate(vllm:spec_decode_num_draft_tokens_total[1m])) > 0)`,
			SpecPositionSignal: `sum by (position) (rate(vllm:spec_decode_num_accepted_tokens_per_pos_total[1m])) / on () group_left () (sum(rate(vllm:spec_decode_num_drafts_total[1m])) > 0)`,
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.g), func(t *testing.T) {
			got := map[string]string{}
			for _, s := range b.SpecDecodeSignals(tt.g, models.Filters{}, "1m") {
				got[s.Name] = s.Expr
			}
			for name, want := range tt.want {
				require.Equal(t, want, got[name], name)
			}
		})
	}
}

// TestSpecDecodeMeanLengthIncludesBonus: the mean length is 1 plus the
// ratio, not the ratio alone (vLLM counts the bonus token).
func TestSpecDecodeMeanLengthIncludesBonus(t *testing.T) {
	b := builders()["v1"]
	for _, s := range b.SpecDecodeSignals(models.GroupModel, models.Filters{}, "1m") {
		if s.Name != SpecMeanLength {
			continue
		}
		e := parse(t, s.Expr).(*parser.BinaryExpr)
		require.Equal(t, parser.ItemType(parser.ADD), e.Op)
		require.Equal(t, "1", e.LHS.String())
		require.Equal(t, parser.ItemType(parser.DIV), unparen(e.RHS).(*parser.BinaryExpr).Op)
		return
	}
	t.Fatal("no mean_acceptance_length expression")
}

func TestSpecDecodeCatalogue(t *testing.T) {
	for _, k := range []SignalKey{SpecDrafts, SpecDraftTokens, SpecAcceptedTokens, SpecAcceptedPerPos} {
		s, ok := Lookup(k)
		require.True(t, ok, k)
		require.Equal(t, Counter, s.Kind)
		require.Contains(t, s.Versions, SpecDecodeEnableFlag)
	}
	// V0 had the token counters under the same names, not the draft count.
	for k, v0 := range map[SignalKey]string{SpecDraftTokens: "spec_decode_num_draft_tokens_total", SpecAcceptedTokens: "spec_decode_num_accepted_tokens_total", SpecDrafts: "", SpecAcceptedPerPos: ""} {
		s, _ := Lookup(k)
		require.Equal(t, v0, s.V0, k)
	}
	txt := SpecDecodeMissingText("vllm:")
	require.Contains(t, txt, "--speculative-config")
	require.Contains(t, txt, "vllm:spec_decode_num_drafts_total")
	require.Contains(t, txt, "vllm:spec_decode_num_accepted_tokens_per_pos_total")
}
