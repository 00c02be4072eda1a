package vllm

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

func TestRuleStartName(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"a histogram: its count, not its buckets", []string{"engine:x_bucket:rate1m", "engine:x_sum:rate1m", "engine:x_count:rate1m"}, "engine:x_sum:rate1m"},
		{"one gauge", []string{"engine:vllm_num_requests_running:sum"}, "engine:vllm_num_requests_running:sum"},
		{"buckets only", []string{"engine:x_bucket:rate5m"}, "engine:x_bucket:rate5m"},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, RuleStartName(tt.names))
		})
	}
}

func TestRuleStartExpression(t *testing.T) {
	scoped := Builder{Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}}
	tests := []struct {
		name     string
		b        Builder
		rng, res time.Duration
		want     string
	}{
		{"unscoped", Builder{}, time.Hour, 30 * time.Second, "min(min_over_time(timestamp(engine:n:sum)[1h:30s]))"},
		{"scoped", scoped, 90 * time.Minute, time.Minute, `min(min_over_time(timestamp(engine:n:sum{cluster="a"})[1h30m:1m]))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.RuleStart("engine:n:sum", tt.rng, tt.res)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}

func TestRuleStartResolution(t *testing.T) {
	tests := []struct {
		name       string
		rng, every time.Duration
		want       time.Duration
	}{
		{"an hour at 30s: the interval", time.Hour, 30 * time.Second, 30 * time.Second},
		{"exactly the step limit", 120 * time.Minute, 30 * time.Second, 30 * time.Second},
		{"one step past it: two intervals", 120*time.Minute + time.Second, 30 * time.Second, time.Minute},
		{"a week at 30s", 7 * 24 * time.Hour, 30 * time.Second, 42 * time.Minute},
		{"interval unknown", time.Hour, 0, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RuleStartResolution(tt.rng, tt.every)
			require.Equal(t, tt.want, got)
			if tt.every > 0 {
				require.Zero(t, got%tt.every, "a multiple of the interval")
				require.LessOrEqual(t, tt.rng/got, time.Duration(RuleStartMaxSteps), "within the step limit")
			}
		})
	}
}

// ruleStore answers RuleStart probes like Prometheus over a recorded name
// evaluated every `every` from first on: the subquery steps at multiples
// of its resolution inside (t−range, t], each seeing the latest sample at
// or before it within the 5m lookback.
type ruleStore struct {
	first  time.Time
	every  time.Duration
	probes int
	empty  int // probes that saw no sample
	steps  int // the most subquery steps one probe asked
	fail   error
}

var subqueryRE = regexp.MustCompile(`\[(\w+):(\w+)\]`)

func (s *ruleStore) query(_ context.Context, expr string, at time.Time) (float64, bool, error) {
	s.probes++
	if s.fail != nil {
		return 0, false, s.fail
	}
	m := subqueryRE.FindStringSubmatch(expr)
	rng, _ := model.ParseDuration(m[1])
	res, _ := model.ParseDuration(m[2])
	steps := 0
	for st := at.Truncate(time.Duration(res)); st.After(at.Add(-time.Duration(rng))); st = st.Add(-time.Duration(res)) {
		steps++
	}
	s.steps = max(s.steps, steps)
	for st := at.Add(-time.Duration(rng)).Truncate(time.Duration(res)); !st.After(at); st = st.Add(time.Duration(res)) {
		if !st.After(at.Add(-time.Duration(rng))) || st.Before(s.first) {
			continue
		}
		latest := s.first.Add(st.Sub(s.first) / s.every * s.every)
		if st.Sub(latest) <= 5*time.Minute {
			return float64(latest.UnixMilli()) / 1000, true, nil
		}
	}
	s.empty++
	return 0, false, nil
}

func TestRuleFirstEvaluation(t *testing.T) {
	end := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	coarse := end.Add(-50 * time.Hour).Truncate(42 * time.Minute) // a step of the week's first probe
	tests := []struct {
		name   string
		first  time.Time // of the rules; evaluated every 30s from then
		from   time.Time
		want   time.Time
		found  bool
		probes int
		empty  int // probes that saw no sample
	}{
		{"an hour's range, on the minute", end.Add(-20 * time.Minute), end.Add(-time.Hour), end.Add(-20 * time.Minute), true, 1, 0},
		{"an hour's range, a phase of 7.25s", end.Add(-20*time.Minute + 7250*time.Millisecond), end.Add(-time.Hour), end.Add(-20*time.Minute + 7250*time.Millisecond), true, 1, 0},
		{"a week: coarse, then refined", end.Add(-50*time.Hour + 13*time.Second), end.Add(-7 * 24 * time.Hour), end.Add(-50*time.Hour + 13*time.Second), true, 2, 0},
		// The week's probe steps by 42m: a first evaluation 10s before a
		// coarse step is the sample that step sees, and the refinement's
		// 30s steps before it see nothing; one 100ms after a coarse step is
		// found inside the next one.
		{"a week, first evaluation just before a coarse step", coarse.Add(-10 * time.Second), end.Add(-7 * 24 * time.Hour), coarse.Add(-10 * time.Second), true, 2, 1},
		{"a week, first evaluation just after a coarse step", coarse.Add(100 * time.Millisecond), end.Add(-7 * 24 * time.Hour), coarse.Add(100 * time.Millisecond), true, 2, 0},
		{"rules after the range", end.Add(time.Minute), end.Add(-time.Hour), time.Time{}, false, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &ruleStore{first: tt.first, every: 30 * time.Second}
			got, ok, err := Builder{}.RuleFirstEvaluation(context.Background(), s.query, "engine:n:sum", tt.from, end, 30*time.Second)
			require.NoError(t, err)
			require.Equal(t, tt.found, ok)
			require.True(t, tt.want.Equal(got), "first evaluation %v, want %v", got, tt.want)
			require.Equal(t, tt.probes, s.probes, "probes")
			require.Equal(t, tt.empty, s.empty, "probes that saw nothing")
			require.LessOrEqual(t, s.steps, RuleStartMaxSteps+1, "each probe within the step limit")
		})
	}
	t.Run("an error is returned", func(t *testing.T) {
		s := &ruleStore{first: end.Add(-time.Minute), every: 30 * time.Second, fail: errors.New("down")}
		_, ok, err := Builder{}.RuleFirstEvaluation(context.Background(), s.query, "engine:n:sum", end.Add(-time.Hour), end, 30*time.Second)
		require.ErrorContains(t, err, "down")
		require.False(t, ok)
	})
}

func TestRulesMixNotice(t *testing.T) {
	end := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		fit    RuleFit
		from   time.Time
		window string
		want   string
	}{
		{"exact", RuleFit{Exact: true, Window: "60s"}, end.Add(-25*time.Minute - 30*time.Second), "60s",
			"Answered from recording rules from 11:34:30 UTC on (engine:…, every 30s): each step shows the rules' latest evaluation at or before it; " +
				"raw series before, when the rules had not run yet."},
		{"nearest", RuleFit{Window: "1m"}, end.Add(-time.Hour), "75s",
			"Answered from recording rules from 11:00:00 UTC on (engine:…, every 30s), close rather than exact (recordingRules nearest): rate window 1m " +
				"for the query's 1m15s (the nearest recorded, within 2.5×); each step shows the rules' latest evaluation, at most 30s before it; " +
				"raw series before, when the rules had not run yet."},
		{"another day", RuleFit{Exact: true}, end.Add(-13 * time.Hour), "",
			"Answered from recording rules from 2026-12-01 23:00:00 UTC on (engine:…, every 30s): each step shows the rules' latest evaluation at or before it; " +
				"raw series before, when the rules had not run yet."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, RulesMixNotice("engine:", 30*time.Second, tt.fit, tt.window, tt.from, end))
		})
	}
}
