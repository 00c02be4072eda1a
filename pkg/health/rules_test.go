package health

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// ruleStore has the recorded names given, evaluated every `every` at a
// phase of 7s, as a Prometheus rule group is.
type ruleStore struct {
	names []string
	every time.Duration
	// asked receives the time range of the rule-name lookup, when set.
	asked *[2]time.Time
}

func (ruleStore) Host() string { return "prom" }
func (ruleStore) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{}, nil
}
func (r ruleStore) MetricNames(_ context.Context, sel string, start, end time.Time) ([]string, error) {
	if !strings.Contains(sel, "engine:") {
		return nil, nil
	}
	if r.asked != nil {
		*r.asked = [2]time.Time{start, end}
	}
	return r.names, nil
}
func (r ruleStore) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	if r.every == 0 || !strings.HasPrefix(expr, "max(timestamp(") {
		return nil, nil, nil
	}
	phase := 7 * time.Second
	last := ts.Add(-phase).Truncate(r.every).Add(phase)
	return model.Vector{{Value: model.SampleValue(float64(last.UnixMilli()) / 1000), Timestamp: model.TimeFromUnixNano(ts.UnixNano())}}, nil, nil
}

func TestRulesNote(t *testing.T) {
	all := vllm.RuleNames("engine:")
	on := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", RecordingRules: models.RulesExact, RulePrefix: "engine:"}
	off := on
	off.RecordingRules = models.RulesOff
	nearest := on
	nearest.RecordingRules = models.RulesNearest
	byJob := on
	byJob.Selector = []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "job", "vllm")}
	tests := []struct {
		name  string
		store ruleStore
		s     models.Settings
		want  string
	}{
		{"all present", ruleStore{names: all, every: 30 * time.Second}, on, ". Recording rules: 145 of 145 present, every 30s; groups: all 7 loaded"},
		{"some present", ruleStore{names: all[:12], every: time.Minute}, on, ". Recording rules: 12 of 145 present, every 1m"},
		{"the stall and p99 groups missing", ruleStore{names: without(all, ":min_over_time", ":increase", "_stalled:", ":p99_", ":p50_", ":p90_", ":mean_", ":server_", "_slo_"), every: 30 * time.Second}, on,
			". Recording rules: 53 of 145 present, every 30s; groups loaded: vllm.recording.latency.rate1m, vllm.recording.latency.rate5m, " +
				"vllm.recording.load; missing: vllm.recording.stall, vllm.recording.engine_p99, vllm.recording.wait_quantiles, vllm.recording.slo; raw series " +
				"answer the fleet table's and saturation's stall state; slo's burn rates (and attainment over a window of 5m–3d); the recorded bucket " +
				"rates (not recorded quantiles) answer the fleet table's queue-time and TTFT p99 per engine, and waitTime's p99 per engine; waitTime's " +
				"p50, p90, p99 and mean of queue time and TTFT per instance and per engine"},
		{"only the quantile group missing", ruleStore{names: without(all, ":p50_", ":p90_", ":mean_", ":server_"), every: 30 * time.Second}, on,
			"; missing: vllm.recording.wait_quantiles; the recorded bucket rates (not recorded quantiles) answer waitTime's p50, p90, p99 and mean of " +
				"queue time and TTFT per instance and per engine"},
		{"the stall group partly loaded", ruleStore{names: without(all, ":min_over_time5m"), every: 30 * time.Second}, on,
			"; partly loaded: vllm.recording.stall (16 of 18); raw series answer the fleet table's and saturation's stall state"},
		// A rule file from before the whole stall state was recorded.
		{"the stall state missing", ruleStore{names: without(all, "vllm_stalled:"), every: 30 * time.Second}, on,
			"; partly loaded: vllm.recording.stall (15 of 18); raw series answer the fleet table's and saturation's stall state"},
		// As many groups partly loaded as missing: the line must still list
		// them, never say every group is loaded.
		// (And, ending the line, no bucket-rate clause where no quantile
		// group is missing: a want ending in $ is the line's end.)
		{"one group partly loaded, one missing", ruleStore{names: without(all, ":min_over_time5m", "_slo_"), every: 30 * time.Second}, on,
			"; partly loaded: vllm.recording.stall (16 of 18); missing: vllm.recording.slo; raw series answer the fleet table's and saturation's stall state; " +
				"slo's burn rates (and attainment over a window of 5m–3d)$"},
		{"none", ruleStore{}, on, "Recording rules: not found (no engine:… series): the plugin queries raw series; load deploy/prometheus/rules/vllm-recording.rules.yml"},
		{"no recent evaluation", ruleStore{names: all}, on, "could not be measured"},
		{"a selector on a label the rules drop", ruleStore{names: all, every: 30 * time.Second}, byJob, "every 30s, but not used: the recorded series do not keep the label job"},
		{"turned off", ruleStore{names: all, every: 30 * time.Second}, off, ""},
		{"close answers allowed", ruleStore{names: all, every: 30 * time.Second}, nearest,
			". Recording rules: 145 of 145 present, every 30s; close answers allowed (recordingRules nearest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rulesNote(context.Background(), tt.store, tt.s, time.Unix(1_800_000_000, 0))
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			if want, ok := strings.CutSuffix(tt.want, "$"); ok {
				require.True(t, strings.HasSuffix(got, want), "%q does not end with %q", got, want)
				return
			}
			require.Contains(t, got, tt.want)
		})
	}
}

// TestRulesLookupRange: the rule names are looked up over the hour before
// the check, like the vLLM names, so a huge TSDB stays cheap to ask.
func TestRulesLookupRange(t *testing.T) {
	var asked [2]time.Time
	now := time.Unix(1_700_000_000, 0)
	s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", RecordingRules: models.RulesExact, RulePrefix: "engine:"}
	rulesNote(context.Background(), ruleStore{names: vllm.RuleNames("engine:"), every: 30 * time.Second, asked: &asked}, s, now)
	require.Equal(t, [2]time.Time{now.Add(-time.Hour), now}, asked)
}

// without are the names that contain none of the parts.
func without(names []string, parts ...string) []string {
	var out []string
	for _, n := range names {
		keep := true
		for _, p := range parts {
			keep = keep && !strings.Contains(n, p)
		}
		if keep {
			out = append(out, n)
		}
	}
	return out
}
