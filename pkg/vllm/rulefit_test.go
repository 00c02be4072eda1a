package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestRuleFit: the exact policy takes only exact answers; the nearest one
// adds close answers (another recorded window within the bound, a step
// not a multiple of the interval) but never breaks the scope rules.
func TestRuleFit(t *testing.T) {
	plain := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rs := RuleSet{Prefix: "engine:", Present: map[string]bool{"x": true}, Interval: 30 * time.Second}
	job := labels.MustNewMatcher(labels.MatchEqual, "job", "vllm")
	const s = time.Second
	q := func(p models.RulesPolicy, step time.Duration, window string, scrape time.Duration) RuleQuestion {
		return RuleQuestion{Step: step, Window: window, Grouping: models.GroupModel, Policy: p, Scrape: scrape}
	}
	tests := []struct {
		name   string
		q      RuleQuestion
		window string // the recorded window read; "" with why
		exact  bool
		why    string
	}{
		{"exact: 30s step, 1m window", q(models.RulesExact, 30*s, "60s", 15*s), "60s", true, ""},
		{"exact is the zero policy", q("", 30*s, "1m", 15*s), "1m", true, ""},
		{"nearest keeps an exact answer exact", q(models.RulesNearest, 30*s, "60s", 15*s), "60s", true, ""},
		{"exact: 1m step, 75s window", q(models.RulesExact, time.Minute, "75s", 15*s), "", false, "not a recorded one"},
		{"nearest: 1m step, 75s window reads 1m", q(models.RulesNearest, time.Minute, "75s", 15*s), "1m", false, ""},
		{"exact: 45s step", q(models.RulesExact, 45*s, "1m", 15*s), "", false, "not a multiple"},
		{"nearest: 45s step, 1m window", q(models.RulesNearest, 45*s, "1m", 15*s), "1m", false, ""},
		{"nearest: 2m step, 2m15s window reads 5m (2.2×)", q(models.RulesNearest, 2*time.Minute, "135s", 15*s), "5m", false, ""},
		{"nearest: 30s scrape, 2m window reads 5m (2.5×): 1m spans two scrapes", q(models.RulesNearest, 30*s, "2m", 30*s), "5m", false, ""},
		{"nearest: 10s scrape, 40s window reads 1m", q(models.RulesNearest, 30*s, "40s", 10*s), "1m", false, ""},
		{"nearest: 5m step, 5m15s window reads 5m", q(models.RulesNearest, 5*time.Minute, "315s", 15*s), "5m", false, ""},
		{"nearest: 10m step, no window covers it", q(models.RulesNearest, 10*time.Minute, "615s", 15*s), "", false, "at least the step 10m"},
		{"nearest: 15s step, under the interval", q(models.RulesNearest, 15*s, "1m", 15*s), "", false, "shorter than the evaluation interval"},
		{"nearest: 1m scrape, 5m is beyond 2.5× and 1m spans one scrape", q(models.RulesNearest, time.Minute, "110s", time.Minute), "", false, "four scrapes"},
		{"nearest: 1m scrape, 4m window reads 5m", q(models.RulesNearest, time.Minute, "4m", time.Minute), "5m", false, ""},
		{"nearest: 20s window is beyond 2.5×", q(models.RulesNearest, 30*s, "20s", 0), "", false, "within 2.5×"},
		{"nearest: gauges, any step of an interval", RuleQuestion{Step: 45 * s, Policy: models.RulesNearest}, "", false, ""},
		{"nearest still keeps labels", RuleQuestion{Step: 30 * s, Window: "75s", Grouping: models.GroupModel,
			Filters: models.Filters{Labels: []*labels.Matcher{job}}, Policy: models.RulesNearest}, "", false, "label job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fit := plain.RuleFit(rs, tt.q)
			if tt.why != "" {
				require.Contains(t, fit.Why, tt.why)
				require.Equal(t, fit.Why, plain.RuleEligible(rs, tt.q))
				return
			}
			require.Empty(t, fit.Why)
			require.Equal(t, tt.window, fit.Window)
			require.Equal(t, tt.exact, fit.Exact)
		})
	}
}

// TestNearestWindow: the nearest recorded window by ratio among those that
// cover the step and hold two scrapes, within NearestWindowFactor.
func TestNearestWindow(t *testing.T) {
	const m = time.Minute
	tests := []struct {
		name               string
		want, step, scrape time.Duration
		got                time.Duration
		ok                 bool
	}{
		{"equal", m, 30 * time.Second, 15 * time.Second, m, true},
		{"a little longer", 75 * time.Second, m, 15 * time.Second, m, true},
		{"a tie by ratio goes to the longer", 2*m + 14*time.Second + 164*time.Millisecond, 2 * m, 0, 5 * m, true},
		{"2m: 1m is nearer than 5m", 2 * m, 30 * time.Second, 15 * time.Second, m, true},
		{"1m spans only two 30s scrapes", 2 * m, 30 * time.Second, 30 * time.Second, 5 * m, true},
		{"1m cannot cover a 2m step", 2 * m, 2 * m, 15 * time.Second, 5 * m, true},
		{"exactly 2.5× is allowed", 2 * m, 2 * m, 0, 5 * m, true},
		{"beyond 2.5×", 13 * m, 5 * m, 0, 0, false},
		{"too short for every window", 10 * time.Second, time.Second, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NearestWindow(tt.want, tt.step, tt.scrape)
			require.Equal(t, tt.ok, ok)
			if ok {
				require.Equal(t, tt.got, got)
			}
		})
	}
}

// TestRulesFitNotice: an exact answer keeps the exact notice; a close one
// names the window used, the query's, the bound and the staleness.
func TestRulesFitNotice(t *testing.T) {
	iv := 30 * time.Second
	require.Equal(t, RulesNotice("engine:", iv), RulesFitNotice("engine:", iv, RuleFit{Window: "60s", Exact: true}, "60s"))
	require.Equal(t, "Answered from recording rules (engine:…, every 30s), close rather than exact (recordingRules nearest): "+
		"rate window 1m for the query's 1m15s (the nearest recorded, within 2.5×); each step shows the rules' latest evaluation, at most 30s before it.",
		RulesFitNotice("engine:", iv, RuleFit{Window: "1m"}, "75s"))
	require.Equal(t, "Answered from recording rules (engine:…, every 30s), close rather than exact (recordingRules nearest): "+
		"each step shows the rules' latest evaluation, at most 30s before it.",
		RulesFitNotice("engine:", iv, RuleFit{}, ""))
}
