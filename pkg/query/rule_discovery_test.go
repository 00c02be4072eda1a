package query_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// probeProm is ruleProm with scripted answers to the discovery's pod
// probe and the coverage probe, recording the window of each name listing.
type probeProm struct {
	*ruleProm
	pods     model.Vector // the pod probe's answer
	coverage *float64     // the coverage probe's value; nil: ruleProm's
	lmu      sync.Mutex
	windows  [][2]time.Time
}

func (p *probeProm) MetricNames(ctx context.Context, sel string, start, end time.Time) ([]string, error) {
	p.lmu.Lock()
	p.windows = append(p.windows, [2]time.Time{start, end})
	p.lmu.Unlock()
	return p.ruleProm.MetricNames(ctx, sel, start, end)
}

func (p *probeProm) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	switch {
	case strings.Contains(expr, `pod!=""`):
		return p.pods, nil, nil
	case p.coverage != nil && strings.HasPrefix(expr, "count(engine:"):
		return model.Vector{{Value: model.SampleValue(*p.coverage)}}, nil, nil
	}
	return p.ruleProm.Query(ctx, expr, ts)
}

// TestRuleDiscoveryRefreshAndProbes: the rule set is refreshed once
// RulesTTL has passed (not a nanosecond later), the names are listed over
// the hour before now, and the recorded series are pod-labelled exactly
// when the pod probe counts more than zero of them.
func TestRuleDiscoveryRefreshAndProbes(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	t.Run("refreshed at RulesTTL", func(t *testing.T) {
		clock := now
		fp := &probeProm{ruleProm: &ruleProm{since: now.Add(-2 * time.Hour)}}
		d := query.NewRuleDiscovery(fp, vllm.Builder{}, "engine:", func() time.Time { return clock })
		d.Get(context.Background())
		clock = now.Add(query.RulesTTL - time.Nanosecond)
		d.Get(context.Background())
		require.Equal(t, 1, fp.names, "still fresh")
		clock = now.Add(query.RulesTTL)
		d.Get(context.Background())
		require.Equal(t, 2, fp.names, "stale at RulesTTL")
	})
	t.Run("names listed over the past hour", func(t *testing.T) {
		fp := &probeProm{ruleProm: &ruleProm{since: now.Add(-2 * time.Hour)}}
		query.NewRuleDiscovery(fp, vllm.Builder{}, "engine:", func() time.Time { return now }).Get(context.Background())
		require.Equal(t, [][2]time.Time{{now.Add(-time.Hour), now}}, fp.windows)
	})
	for _, tt := range []struct {
		name string
		pods model.Vector
		want bool
	}{
		{"no pod series", nil, false},
		{"a count of zero", model.Vector{{Value: 0}}, false},
		{"pod series", model.Vector{{Value: 1}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fp := &probeProm{ruleProm: &ruleProm{since: now.Add(-2 * time.Hour)}, pods: tt.pods}
			rs := query.NewRuleDiscovery(fp, vllm.Builder{}, "engine:", func() time.Time { return now }).Get(context.Background())
			require.Equal(t, 30*time.Second, rs.Interval)
			require.Equal(t, tt.want, rs.PodSeries)
		})
	}
}

// TestRuleCoverageOfZero: a coverage probe that counts zero recorded
// series at the range's start does not cover it, so the query stays raw
// (no first evaluation is found inside the range either).
func TestRuleCoverageOfZero(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tt := range []struct {
		name     string
		coverage float64
		rules    bool
	}{
		{"zero: raw", 0, false},
		{"one: rules", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.coverage
			fp := &probeProm{ruleProm: &ruleProm{since: now.Add(-2 * time.Hour)}, coverage: &c}
			s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
			require.NoError(t, err)
			e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
				Now: func() time.Time { return now }}
			q := dq("A", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`, now.Add(-time.Hour), now)
			q.Interval = 30 * time.Second
			r := run(t, e, q).Responses["A"]
			require.NoError(t, r.Error)
			require.Equal(t, tt.rules, strings.Contains(fp.exprs(), "engine:vllm_time_to_first_token_seconds_bucket:rate1m"), fp.exprs())
		})
	}
}
