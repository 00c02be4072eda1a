package health

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rulesNote says whether the shipped recording rules are there, how many
// of their series and how often they are evaluated, and when the data
// source cannot use them. A failed lookup leaves the note out: the rules
// are an optimisation, never a reason to fail health.
func rulesNote(ctx context.Context, p Prometheus, s models.Settings, now time.Time) string {
	if !s.RecordingRules.On() {
		return "" // turned off on purpose: nothing to say
	}
	b := builder(ctx, s)
	names, err := p.MetricNames(ctx, b.RuleNameSelector(s.RulePrefix), now.Add(-lookback), now)
	if err != nil {
		return ""
	}
	rs := vllm.RuleSet{Prefix: s.RulePrefix, Present: map[string]bool{}}
	all := vllm.RuleNames(s.RulePrefix)
	for _, n := range names {
		rs.Present[n] = true
	}
	n := 0
	for _, name := range all {
		if rs.Present[name] {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf(". Recording rules: not found (no %s… series): the plugin queries raw series; load %s to make big dashboards cheap",
			s.RulePrefix, "deploy/prometheus/rules/vllm-recording.rules.yml")
	}
	return fmt.Sprintf(". Recording rules: %d of %d present%s%s%s", n, len(all), rulesEvery(ctx, p, b, rs, now),
		policyNote(s.RecordingRules), groupsNote(rs))
}

// groupsNote says which of the shipped rule groups are loaded (every name
// has series), which only in part and which not at all, and what then
// stays on raw series: a group missing never changes an answer (the
// plugin plans those panels raw), but it costs the store what the group
// would have saved.
func groupsNote(rs vllm.RuleSet) string {
	var full, partial, missing, raw, buckets []string
	for _, g := range vllm.RuleGroups(rs.Prefix) {
		n := 0
		for _, name := range g.Names {
			if rs.Present[name] {
				n++
			}
		}
		if n == len(g.Names) {
			full = append(full, g.Name)
			continue
		}
		if n > 0 {
			partial = append(partial, fmt.Sprintf("%s (%d of %d)", g.Name, n, len(g.Names)))
		} else {
			missing = append(missing, g.Name)
		}
		if g.Buckets {
			buckets = append(buckets, g.Panels)
		} else {
			raw = append(raw, g.Panels)
		}
	}
	if len(partial)+len(missing) == 0 {
		return fmt.Sprintf("; groups: all %d loaded", len(full))
	}
	out := "; groups loaded: " + listOrNone(full)
	if len(partial) > 0 {
		out += "; partly loaded: " + strings.Join(partial, ", ")
	}
	if len(missing) > 0 {
		out += "; missing: " + strings.Join(missing, ", ")
	}
	if len(raw) > 0 {
		out += "; raw series answer " + strings.Join(raw, "; ")
	}
	if len(buckets) > 0 {
		out += "; the recorded bucket rates (not recorded quantiles) answer " + strings.Join(buckets, "; ")
	}
	return out
}

// listOrNone joins names, or says none.
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// policyNote says when close answers are allowed besides exact ones.
func policyNote(p models.RulesPolicy) string {
	if p != models.RulesNearest {
		return ""
	}
	return "; close answers allowed (recordingRules nearest: the nearest recorded window, each step at most one evaluation old)"
}

// rulesEvery is ", every 30s", or why the rules cannot be used.
func rulesEvery(ctx context.Context, p Prometheus, b vllm.Builder, rs vllm.RuleSet, now time.Time) string {
	for _, name := range vllm.RuleDiscoveryNames(rs.Prefix) {
		if !rs.Present[name] {
			continue
		}
		iv, err := b.RuleInterval(ctx, vllm.FirstValue(p.Query), name, now)
		if err != nil || iv == 0 {
			return " (their evaluation interval could not be measured: no recent evaluations; the plugin queries raw series)"
		}
		rs.Interval = iv
		if why := b.RuleEligible(rs, vllm.RuleQuestion{Step: iv, Grouping: models.GroupNone}); why != "" {
			return fmt.Sprintf(", every %s, but not used: %s", vllm.ShortDuration(iv), why)
		}
		return ", every " + vllm.ShortDuration(iv)
	}
	return ""
}
