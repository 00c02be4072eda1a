package interval_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// These tests pin which panels the shipped recording rules (every 30s,
// rate windows 1m and 5m) can answer, from the numbers Grafana hands the
// plugin. The frontend sends intervalMs = max(panel min interval,
// Round(range / maxDataPoints)), maxDataPoints being the panel's
// width in pixels (@grafana/data rangeutil.calculateInterval); the plugin
// then steps at Compute's step and rates over $__rate_interval =
// max(intervalMs + scrape, 4 × scrape). An exact answer needs a step that
// is a multiple of 30s and a window of 1m or 5m, which only one common
// setting gives: scrape 15s with a panel min interval of 30s (step 30s,
// window max(45s, 60s) = 1m) while range / width ≤ 45s, i.e. up to about
// 11h on a half-width panel (900 px) and 22h on a full-width one.

// ruleEvery is the shipped rules' evaluation interval.
const ruleEvery = 30 * time.Second

// panelStep is the step and rate window the plugin computes for a panel of
// width px showing rng, as the frontend and Compute do.
func panelStep(t *testing.T, scrape, panelMin time.Duration, width int64, rng time.Duration) interval.Result {
	t.Helper()
	intervalMs := max(panelMin, interval.Round(rng/time.Duration(width)))
	to := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	r, err := interval.Compute(interval.Input{From: to.Add(-rng), To: to, MaxDataPoints: width,
		IntervalMs: intervalMs.Milliseconds(), Scrape: scrape})
	require.NoError(t, err)
	return r
}

// ruleFit is how the shipped rules answer a waitTime-like question (a rate
// window) at r under policy p.
func ruleFit(r interval.Result, scrape time.Duration, p models.RulesPolicy) vllm.RuleFit {
	rs := vllm.RuleSet{Prefix: "engine:", Present: map[string]bool{"x": true}, Interval: ruleEvery}
	b := vllm.Builder{Prefix: models.DefaultMetricPrefix, InstanceLabel: "instance"}
	return b.RuleFit(rs, vllm.RuleQuestion{Step: r.Step, Window: model.Duration(r.RateInterval).String(),
		Grouping: models.GroupModel, Policy: p, Scrape: scrape})
}

// TestRuleStepTable is the table of numbers: step, $__rate_interval, and
// whether the rules answer exactly, or which recorded window the nearest
// policy reads ("" when neither).
func TestRuleStepTable(t *testing.T) {
	const s, m, h = time.Second, time.Minute, time.Hour
	tests := []struct {
		scrape, panelMin time.Duration
		width            int64
		rng              time.Duration
		step, window     time.Duration
		exact            bool
		nearest          string
	}{
		// No panel min interval: the step follows the range, never 30s.
		{15 * s, 0, 900, 1 * h, 5 * s, 1 * m, false, ""},
		{15 * s, 0, 900, 6 * h, 20 * s, 1 * m, false, ""},
		{15 * s, 0, 900, 12 * h, 1 * m, 75 * s, false, "1m"},
		{15 * s, 0, 1800, 24 * h, 1 * m, 75 * s, false, "1m"},
		// A 15s panel min interval: a step of 15s is below the interval.
		{15 * s, 15 * s, 900, 1 * h, 15 * s, 1 * m, false, ""},
		// 30s with scrape 15s: exact up to range = 45s × width.
		{15 * s, 30 * s, 900, 15 * m, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 900, 1 * h, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 900, 6 * h, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 900, 11 * h, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 900, 12 * h, 1 * m, 75 * s, false, "1m"},
		{15 * s, 30 * s, 1800, 12 * h, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 600, 6 * h, 30 * s, 1 * m, true, "1m"},
		{15 * s, 30 * s, 900, 24 * h, 2 * m, 135 * s, false, "5m"},
		{15 * s, 30 * s, 900, 48 * h, 2 * m, 135 * s, false, "5m"},
		{15 * s, 30 * s, 1800, 7 * 24 * h, 5 * m, 315 * s, false, "5m"},
		{15 * s, 30 * s, 900, 7 * 24 * h, 10 * m, 615 * s, false, ""},
		// A 1m panel min interval: window 75s, never exact.
		{15 * s, 1 * m, 900, 1 * h, 1 * m, 75 * s, false, "1m"},
		// Scrape 10s: window 40s (1m is 1.5× it) while steps are ≤ 30s.
		{10 * s, 30 * s, 900, 1 * h, 30 * s, 40 * s, false, "1m"},
		// Scrape 30s (kube-prometheus): window ≥ 2m, never exact; 1m spans
		// two scrapes, too few, so nearest reads 5m.
		{30 * s, 30 * s, 900, 1 * h, 30 * s, 2 * m, false, "5m"},
		{30 * s, 30 * s, 900, 24 * h, 2 * m, 150 * s, false, "5m"},
		{30 * s, 0, 900, 1 * h, 5 * s, 2 * m, false, ""},
		// Scrape 1m (Prometheus' default): window ≥ 4m; 1m spans one scrape.
		{1 * m, 30 * s, 900, 1 * h, 30 * s, 4 * m, false, "5m"},
		{1 * m, 30 * s, 900, 7 * 24 * h, 10 * m, 11 * m, false, ""},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s scrape, min %s, %s at %dpx", model.Duration(tt.scrape), model.Duration(tt.panelMin),
			model.Duration(tt.rng), tt.width)
		t.Run(name, func(t *testing.T) {
			r := panelStep(t, tt.scrape, tt.panelMin, tt.width, tt.rng)
			require.Equal(t, tt.step, r.Step, "step")
			require.Equal(t, tt.window, r.RateInterval, "$__rate_interval")
			exact := ruleFit(r, tt.scrape, models.RulesExact)
			require.Equal(t, tt.exact, exact.Why == "", "exact: %s", exact.Why)
			near := ruleFit(r, tt.scrape, models.RulesNearest)
			if tt.nearest == "" {
				require.NotEmpty(t, near.Why, "nearest answers")
				return
			}
			require.Empty(t, near.Why)
			w, err := model.ParseDuration(near.Window)
			require.NoError(t, err)
			require.Equal(t, tt.nearest, w.String(), "nearest window")
		})
	}
}

// dashPanel is what TestDashboardRulePanels reads of a dashboard panel.
type dashPanel struct {
	ID       int    `json:"id"`
	Title    string `json:"title"`
	Interval string `json:"interval"`
	GridPos  struct {
		W int64 `json:"w"`
	} `json:"gridPos"`
	Targets []struct {
		QueryType string `json:"queryType"`
		Grouping  string `json:"grouping"`
		RankBy    string `json:"rankBy"`
		Format    string `json:"format"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// ruleAnswerable reports whether the rules can answer every query of the
// panel: waitTime's quantiles (never its heatmap: a step's exact count
// is no rate over the rules' window), queue, and topK by a signal they
// record, grouped by labels they keep.
func (p dashPanel) ruleAnswerable() bool {
	for _, tg := range p.Targets {
		_, ranked := vllm.RankWindow(tg.RankBy, "")
		quantiles := tg.QueryType == "waitTime" && tg.Format != models.WaitTimeHeatmap
		typ := quantiles || tg.QueryType == "queue" || (tg.QueryType == "topk" && ranked)
		if !typ || !vllm.RecordedGrouping(models.Grouping(tg.Grouping)) {
			return false
		}
	}
	return len(p.Targets) > 0
}

// TestDashboardRulePanels: every shipped panel the rules can answer has a
// 30s min interval, so that on a scrape of 15s its queries land on the
// rules exactly for the common ranges (15m to 6h) at its width (75 px per
// grid column, a 1920 px screen less the side menu), and no other panel
// has one (its step is left to Grafana).
func TestDashboardRulePanels(t *testing.T) {
	files, err := filepath.Glob("../../dashboards/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	answerable := 0
	for _, f := range files {
		var d struct {
			Panels []dashPanel `json:"panels"`
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &d))
		for _, p := range flatten(d.Panels) {
			t.Run(filepath.Base(f)+"/"+p.Title, func(t *testing.T) {
				if !p.ruleAnswerable() {
					require.Empty(t, p.Interval, "a panel the rules cannot answer keeps Grafana's step")
					return
				}
				answerable++
				require.Equal(t, "30s", p.Interval, "min interval of a panel the rules answer")
				for _, rng := range []time.Duration{15 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour} {
					r := panelStep(t, 15*time.Second, 30*time.Second, p.GridPos.W*75, rng)
					fit := ruleFit(r, 15*time.Second, models.RulesExact)
					require.Empty(t, fit.Why, "over %s", rng)
				}
			})
		}
	}
	require.GreaterOrEqual(t, answerable, 13, "the waitTime, queue and topK panels")
}

// flatten lists the panels with those inside rows.
func flatten(ps []dashPanel) []dashPanel {
	var out []dashPanel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// TestRuleStepTableQueryMinStep: the query's own min step (its "interval"
// field, not the panel's) is not a way onto the rules: Grafana then rates
// over max(intervalMs + min step, 4 × min step), so a 30s min step gives a
// 2m window, and 15s a step below the evaluation interval.
func TestRuleStepTableQueryMinStep(t *testing.T) {
	const s, m, h = time.Second, time.Minute, time.Hour
	to := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		scrape       time.Duration
		minStep      string
		rng          time.Duration
		step, window time.Duration
		nearest      string
	}{
		{15 * s, "15s", 1 * h, 15 * s, 1 * m, ""},
		{15 * s, "30s", 1 * h, 30 * s, 2 * m, "1m"},
		{15 * s, "30s", 12 * h, 1 * m, 2 * m, "1m"},
		{30 * s, "30s", 6 * h, 30 * s, 2 * m, "5m"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s scrape, min step %s, %s", model.Duration(tt.scrape), tt.minStep, model.Duration(tt.rng)), func(t *testing.T) {
			r, err := interval.Compute(interval.Input{From: to.Add(-tt.rng), To: to, MaxDataPoints: 900,
				IntervalMs: interval.Round(tt.rng / 900).Milliseconds(), QueryInterval: tt.minStep, Scrape: tt.scrape})
			require.NoError(t, err)
			require.Equal(t, tt.step, r.Step, "step")
			require.Equal(t, tt.window, r.RateInterval, "$__rate_interval")
			require.NotEmpty(t, ruleFit(r, tt.scrape, models.RulesExact).Why, "never exact")
			near := ruleFit(r, tt.scrape, models.RulesNearest)
			if tt.nearest == "" {
				require.NotEmpty(t, near.Why)
				return
			}
			require.Equal(t, tt.nearest, near.Window)
		})
	}
}
