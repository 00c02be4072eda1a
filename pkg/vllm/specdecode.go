package vllm

import (
	"fmt"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Speculative-decoding signals (vllm/v1/spec_decode/metrics.py). vLLM
// registers them only when speculative decoding is configured. V0 had the
// draft- and accepted-token counters under the same names (and the gauges
// spec_decode_draft_acceptance_rate and spec_decode_efficiency, which the
// query does not read), but neither the draft count nor the per-position
// counter.
const (
	SpecDrafts         SignalKey = "spec_decode_drafts"
	SpecDraftTokens    SignalKey = "spec_decode_draft_tokens"
	SpecAcceptedTokens SignalKey = "spec_decode_accepted_tokens"
	SpecAcceptedPerPos SignalKey = "spec_decode_accepted_per_pos"
)

// The specDecode query's SignalTagLabel values. Per-position series carry
// SpecPositionSignal and vLLM's position label (0 is the first drafted token).
const (
	SpecAcceptanceRate   = "acceptance_rate"
	SpecMeanLength       = "mean_acceptance_length"
	SpecPositionSignal   = "acceptance_rate_by_position"
	SpecPositionLabel    = "position"
	SpecDecodeEnableFlag = "--speculative-config"
)

// SpecDecodeSignals are the specDecode query's expressions per grouping,
// each a ratio of summed rates (never an average of per-engine ratios, so
// an engine weighs by its drafts):
//   - acceptance_rate: accepted ÷ draft tokens (0 to 1);
//   - mean_acceptance_length: 1 + accepted tokens ÷ drafts, the tokens one
//     draft yields including the bonus token the target model adds;
//   - acceptance_rate_by_position: accepted tokens at each draft position
//     ÷ drafts, one series per position.
//
// A denominator whose rate is 0 (no drafts in the window) drops the step
// rather than dividing by zero.
func (b Builder) SpecDecodeSignals(g models.Grouping, f models.Filters, window string) []SignalExpr {
	gl := b.GroupLabels(g)
	sum := func(key SignalKey, extra ...string) string {
		return agg("sum", append(append([]string(nil), gl...), extra...), b.rateUnion(key, f, "", window))
	}
	positive := func(expr string) string { return "(" + expr + " > 0)" }
	accepted, drafts := sum(SpecAcceptedTokens), positive(sum(SpecDrafts))
	return []SignalExpr{
		{SpecAcceptanceRate, accepted + " / " + positive(sum(SpecDraftTokens))},
		{SpecMeanLength, "1 + " + accepted + " / " + drafts},
		{SpecPositionSignal, fmt.Sprintf("%s / on (%s) group_left () %s", sum(SpecAcceptedPerPos, SpecPositionLabel), strings.Join(gl, ", "), drafts)},
	}
}

// SpecDecodeMissingText is the info notice for engines that export no
// speculative-decoding counters: the feature is off, which is not a fault.
func SpecDecodeMissingText(prefix string) string {
	return fmt.Sprintf("The selected engines export no speculative-decoding counters (%s): speculative decoding is not configured on them. "+
		"vLLM exports these counters only when it runs with %s (a draft model, n-gram, EAGLE or MTP proposer).",
		strings.Join(specNames(prefix), ", "), SpecDecodeEnableFlag)
}

// SpecDecodeIdleText is the info notice for engines that export the
// counters but proposed no draft in the range.
func SpecDecodeIdleText(prefix, window string) string {
	return fmt.Sprintf("The selected engines export %s, but no draft was proposed in this time range and the rate window (%s) before it "+
		"(the engines were idle): an acceptance rate needs drafts.", prefix+"spec_decode_num_draft_tokens_total", window)
}

// SpecDecodeV0Text says why some groups have an acceptance rate but no mean
// acceptance length or per-position rate.
func SpecDecodeV0Text(prefix string, without int) string {
	return fmt.Sprintf("%d of the groups have no draft count (%sspec_decode_num_drafts_total): V0 engines, and V1 before about 0.8.5, export only the "+
		"draft- and accepted-token counters, so their mean acceptance length and per-position acceptance are not shown.", without, prefix)
}

// specNames are the V1 counters the query reads, with the prefix.
func specNames(prefix string) []string {
	var out []string
	for _, k := range []SignalKey{SpecDrafts, SpecDraftTokens, SpecAcceptedTokens, SpecAcceptedPerPos} {
		s, _ := Lookup(k)
		out = append(out, prefix+s.V1)
	}
	return out
}
