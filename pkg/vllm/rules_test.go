package vllm

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestRuleNamesMatchTheRuleFile: the catalogue names exactly the series
// the shipped rule file records.
func TestRuleNamesMatchTheRuleFile(t *testing.T) {
	b, err := os.ReadFile("../../deploy/prometheus/rules/vllm-recording.rules.yml")
	require.NoError(t, err)
	var inFile []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- record: (\S+)$`).FindAllSubmatch(b, -1) {
		inFile = append(inFile, string(m[1]))
	}
	require.ElementsMatch(t, inFile, RuleNames("engine:"))
	require.Len(t, RuleNames("engine:"), 145)
	require.Contains(t, RuleNames("fleet:"), "fleet:vllm_num_requests_running:sum")
}

func TestRuleEligible(t *testing.T) {
	plain := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rs := RuleSet{Prefix: "engine:", Present: map[string]bool{"x": true}, Interval: 30 * time.Second}
	pods := rs
	pods.PodSeries = true
	ns := labels.MustNewMatcher(labels.MatchEqual, "namespace", "inference")
	job := labels.MustNewMatcher(labels.MatchEqual, "job", "vllm")
	scoped := plain
	scoped.Scope = []*labels.Matcher{job}
	ray := plain
	ray.Prefixes = []string{"ray_vllm:", "ray_vllm_"}
	excl := plain
	excl.Exclude = []*labels.Matcher{job}
	k8s := plain
	k8s.Identity = []string{"namespace", "pod"}
	q := func(step time.Duration, window string, g models.Grouping, f models.Filters) RuleQuestion {
		return RuleQuestion{Step: step, Window: window, Grouping: g, Filters: f}
	}
	tests := []struct {
		name string
		b    Builder
		rs   RuleSet
		q    RuleQuestion
		why  string // "" when the rules answer
	}{
		{"1m window, step of the interval", plain, rs, q(30*time.Second, "60s", models.GroupModel, models.Filters{}), ""},
		{"5m window, step of two intervals", plain, rs, q(time.Minute, "5m", models.GroupInstance, models.Filters{}), ""},
		{"gauges need no window", plain, rs, q(30*time.Second, "", models.GroupInstanceEngine, models.Filters{}), ""},
		{"interval unknown", plain, RuleSet{Present: rs.Present}, q(30*time.Second, "1m", models.GroupModel, models.Filters{}), "interval is unknown"},
		{"step not a multiple", plain, rs, q(45*time.Second, "1m", models.GroupModel, models.Filters{}), "not a multiple"},
		{"window not recorded", plain, rs, q(30*time.Second, "2m", models.GroupModel, models.Filters{}), "not a recorded one"},
		{"Ray Serve names", ray, rs, q(30*time.Second, "1m", models.GroupModel, models.Filters{}), "vllm: names only"},
		{"profile exclusions", excl, rs, q(30*time.Second, "1m", models.GroupModel, models.Filters{}), "excludes"},
		{"selector on job", scoped, rs, q(30*time.Second, "1m", models.GroupModel, models.Filters{}), "label job"},
		{"matcher on job", plain, rs, q(30*time.Second, "1m", models.GroupModel, models.Filters{Labels: []*labels.Matcher{job}}), "label job"},
		{"matcher on namespace", plain, rs, q(30*time.Second, "1m", models.GroupModel, models.Filters{Labels: []*labels.Matcher{ns}}), ""},
		{"by instance where pods lose it", plain, pods, q(30*time.Second, "1m", models.GroupInstance, models.Filters{}), "label instance"},
		{"instance filter where pods lose it", plain, pods, q(30*time.Second, "1m", models.GroupModel, models.Filters{Instances: []string{"a:8000"}}), "label instance"},
		{"by namespace/pod", k8s, pods, q(30*time.Second, "1m", models.GroupInstanceEngine, models.Filters{Instances: []string{"ns/p"}}), ""},
		{"by role", plain, rs, q(30*time.Second, "1m", models.GroupRole, models.Filters{}), "do not keep the label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := tt.b.RuleEligible(tt.rs, tt.q)
			if tt.why == "" {
				require.Empty(t, why)
				return
			}
			require.Contains(t, why, tt.why)
		})
	}
}

func TestWaitTimeFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Resolution: "15s"}
	f := models.Filters{Models: []string{"m"}, Labels: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "b")}}
	tests := []struct {
		name, family, window string
		live                 bool
		want                 []string
	}{
		{"ttft 1m", "ttft", "60s", false, []string{`engine:vllm_time_to_first_token_seconds_bucket:rate1m{model_name="m", cluster="b"}`, "sum by (le, instance)", `engine:vllm_time_to_first_token_seconds_sum:rate1m`}},
		{"itl 5m under its V1 name", "itl", "5m", false, []string{"engine:vllm_inter_token_latency_seconds_count:rate5m"}},
		{"live stays raw", "queue_time", "1m", true, []string{"engine:vllm_request_queue_time_seconds_bucket:rate1m", "vllm:num_requests_waiting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp, ok := b.WaitTimeFromRules("engine:", tt.family, []float64{0.5, 0.99}, tt.live, models.GroupInstance, f, tt.window, RecordedWait{})
			require.True(t, ok)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
			require.NoError(t, err, rp.Expr)
			for _, w := range tt.want {
				require.Contains(t, rp.Expr, w)
			}
			require.Len(t, rp.Names, 3)
			if !tt.live {
				require.NotContains(t, rp.Expr, "vllm:", "no raw series")
			}
		})
	}
	_, ok := b.WaitTimeFromRules("engine:", "ttft", []float64{0.5}, false, models.GroupModel, f, "2m", RecordedWait{})
	require.False(t, ok, "no recorded 2m window")
}

func TestQueueSignalFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rp, ok := b.QueueSignalFromRules("engine:", "waiting", models.GroupModel, models.Filters{})
	require.True(t, ok)
	require.Equal(t, "sum by (model_name) (engine:vllm_num_requests_waiting:sum)", rp.Expr)
	_, ok = b.QueueSignalFromRules("engine:", "swapped", models.GroupModel, models.Filters{})
	require.False(t, ok, "no rule records swapped")
}

func TestRuleIntervalFrom(t *testing.T) {
	require.Equal(t, 30*time.Second, RuleIntervalFrom([]float64{1000.25, 1030.25, 1060.25, 1120.25}), "a missed evaluation does not win")
	require.Equal(t, 5*time.Second, RuleIntervalFrom([]float64{1.001, 6.001, 11.001}))
	require.Zero(t, RuleIntervalFrom([]float64{5}))
}

func TestRuleDiscoveryExpressionsParse(t *testing.T) {
	b := Builder{Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}}
	for _, e := range []string{b.RuleTimestamps("engine:vllm_num_requests_running:sum"), b.RulePodProbe("engine:x:sum"),
		b.RuleNameSelector("engine:"), b.RuleCoverage("engine:x:sum", models.Filters{})} {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
		require.NoError(t, err, e)
	}
	require.Equal(t, `{__name__=~"^engine:.+", cluster="a"}`, b.RuleNameSelector("engine:"))
}

func TestTopKFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		rankBy, window, want string
	}{
		{"waiting", "", "topk(3, max_over_time((sum by (model_name) (engine:vllm_num_requests_waiting:sum))[1h:30s]))"},
		{"running", "", "engine:vllm_num_requests_running:sum"},
		{"wait_p99", "5m", "histogram_quantile(0.99, sum by (le, model_name) (engine:vllm_request_queue_time_seconds_bucket:rate5m))"},
	}
	for _, tt := range tests {
		t.Run(tt.rankBy, func(t *testing.T) {
			w, ok := RankWindow(tt.rankBy, "5m")
			require.True(t, ok)
			require.Equal(t, tt.window, w)
			rp, ok := b.TopKRankingFromRules("engine:", tt.rankBy, "max", 3, models.GroupModel, models.Filters{}, w, "1h", "30s")
			require.True(t, ok)
			require.Contains(t, rp.Expr, tt.want)
			series, ok := b.TopKSeriesFromRules("engine:", tt.rankBy, models.GroupModel, models.Filters{}, w, []string{"a:8000"})
			require.True(t, ok)
			for _, e := range []string{rp.Expr, series.Expr} {
				_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
				require.NoError(t, err, e)
			}
			require.Contains(t, series.Expr, `instance="a:8000"`)
		})
	}
	for _, rankBy := range []string{"kv_usage", "preemption_rate"} {
		_, ok := RankWindow(rankBy, "1m")
		require.False(t, ok, rankBy)
	}
}
