package vllm

import (
	"fmt"
	"math"
)

// Names of the saturation query's prefix-cache expressions.
const (
	SatPrefixHitRate       = "prefix_hit_rate"
	SatPrefixHitRateBefore = "prefix_hit_rate_before"
)

// A prefix-cache hit rate has collapsed when it fell below
// PrefixCollapseRatio of its value over the window before, from at least
// PrefixCollapseFloor. They are the numbers of the
// VLLMPrefixCacheHitRateCollapse alert (deploy/prometheus/rules/vllm.rules.yml:
// below half of the recent average, which was at least 20%), so the
// saturation evidence and the alert call the same thing a collapse. The
// floor keeps noise at a hit rate that was never worth much (5% → 2%)
// from reading as a collapse.
const (
	PrefixCollapseRatio = 0.5
	PrefixCollapseFloor = 0.2
)

// PrefixCollapsed reports whether the hit rate now fell by more than
// PrefixCollapseRatio from before, which was at least PrefixCollapseFloor.
// A missing value (NaN) is never a collapse.
func PrefixCollapsed(now, before float64) bool {
	if math.IsNaN(now) || math.IsNaN(before) {
		return false
	}
	return before >= PrefixCollapseFloor && now < PrefixCollapseRatio*before
}

// prefixEvidence is the clause a KV-bound reason gains when the hit rate
// collapsed in some of its KV-bound steps: the hit rates of the step
// where it fell furthest, and why that matters next to KV pressure. ""
// when it did not collapse.
func prefixEvidence(steps []SatStep, verdicts []string) string {
	n, worst := 0, -1
	for i, s := range steps {
		if verdicts[i] != VerdictKVBound || !PrefixCollapsed(s.PrefixHitRate, s.PrefixHitRateBefore) {
			continue
		}
		n++
		if worst < 0 || s.PrefixHitRate-s.PrefixHitRateBefore < steps[worst].PrefixHitRate-steps[worst].PrefixHitRateBefore {
			worst = i
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; the prefix-cache hit rate collapsed beside it (from %s to %s over one rate window, in %d KV-bound steps): "+
		"more prompt tokens must be computed and held in the KV cache, so look for what changed the prompts or their routing",
		pct(steps[worst].PrefixHitRateBefore), pct(steps[worst].PrefixHitRate), n)
}
