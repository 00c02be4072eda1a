package vllm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The prefix-cache evidence quotes the KV-bound step where the hit rate
// fell furthest (now − before most negative; the first of equal falls),
// whichever position it holds, and counts the collapsed KV-bound steps.
func TestPrefixEvidenceQuotesTheWorstFall(t *testing.T) {
	hit := func(now, before float64) SatStep { return SatStep{PrefixHitRate: now, PrefixHitRateBefore: before} }
	kv := VerdictKVBound
	cases := []struct {
		name     string
		steps    []SatStep
		verdicts []string
		from, to string
		n        string
	}{
		{"worst first", []SatStep{hit(0.1, 0.8), hit(0.15, 0.4)}, []string{kv, kv}, "80%", "10%", "in 2 KV-bound"},
		{"worst last", []SatStep{hit(0.15, 0.4), hit(0.1, 0.8)}, []string{kv, kv}, "80%", "10%", "in 2 KV-bound"},
		{"equal falls keep the first", []SatStep{hit(0.25, 0.75), hit(0.125, 0.625)}, []string{kv, kv}, "75%", "25%", "in 2 KV-bound"},
		{"only the first step collapsed", []SatStep{hit(0.1, 0.8), hit(math.NaN(), math.NaN())}, []string{kv, kv}, "80%", "10%", "in 1 KV-bound"},
		{"only the last step collapsed", []SatStep{hit(0.5, 0.5), hit(0.1, 0.6)}, []string{kv, kv}, "60%", "10%", "in 1 KV-bound"},
		{"a collapse outside KV-bound steps is not quoted", []SatStep{hit(0.05, 0.9), hit(0.2, 0.6)}, []string{VerdictQueueing, kv}, "60%", "20%", "in 1 KV-bound"},
		{"a single step", []SatStep{hit(0.1, 0.5)}, []string{kv}, "50%", "10%", "in 1 KV-bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := prefixEvidence(tc.steps, tc.verdicts)
			require.Contains(t, got, "from "+tc.from+" to "+tc.to+" over one rate window, "+tc.n)
		})
	}
	require.Empty(t, prefixEvidence([]SatStep{hit(0.5, 0.6)}, []string{kv}), "no collapse, no clause")
}
