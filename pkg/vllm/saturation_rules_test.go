package vllm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestSaturationFromRules(t *testing.T) {
	plain := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	pod := Builder{Prefix: "vllm:", Identity: []string{"namespace", "pod"}}
	tests := []struct {
		name     string
		b        Builder
		g        models.Grouping
		f        models.Filters
		window   string
		want     map[string]string // signal → expression; nil: nothing on rules
		wantName map[string]string
	}{
		{name: "by instance over 1m", b: plain, g: models.GroupInstance, window: "1m",
			want: map[string]string{
				SatPreemptions: "sum by (instance) (engine:vllm_num_preemptions:rate1m)",
				SatCompletions: "sum by (instance) (engine:vllm_request_success:rate1m)",
			},
			wantName: map[string]string{SatPreemptions: "engine:vllm_num_preemptions:rate1m", SatCompletions: "engine:vllm_request_success:rate1m"}},
		{name: "60s is the recorded 1m", b: plain, g: models.GroupInstance, window: "60s",
			want: map[string]string{
				SatPreemptions: "sum by (instance) (engine:vllm_num_preemptions:rate1m)",
				SatCompletions: "sum by (instance) (engine:vllm_request_success:rate1m)",
			}},
		{name: "by pod and engine over 5m, filtered", b: pod, g: models.GroupInstanceEngine, window: "5m",
			f: models.Filters{Labels: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "b")}},
			want: map[string]string{
				SatPreemptions: `sum by (namespace, pod, engine) (engine:vllm_num_preemptions:rate5m{cluster="b"})`,
				SatCompletions: `sum by (namespace, pod, engine) (engine:vllm_request_success:rate5m{cluster="b"})`,
			}},
		{name: "a window no rule records", b: plain, g: models.GroupInstance, window: "75s"},
		{name: "by role, which the rules sum away", b: plain, g: models.GroupRole, window: "1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.SaturationFromRules("engine:", tt.g, tt.f, tt.window)
			exprs := map[string]string{}
			for sig, rp := range got {
				_, err := parser.NewParser(parser.Options{}).ParseExpr(rp.Expr)
				require.NoError(t, err, rp.Expr)
				require.Len(t, rp.Names, 1)
				require.Contains(t, rp.Expr, rp.Names[0])
				require.Contains(t, RuleNames("engine:"), rp.Names[0], "a name the rule file records")
				if n, ok := tt.wantName[sig]; ok {
					require.Equal(t, n, rp.Names[0])
				}
				exprs[sig] = rp.Expr
			}
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, exprs)
		})
	}
}

// TestSaturationRulesCoverEverySignal: each saturation signal is either
// planned on the rules or has a reason to stay raw, never both, so a new
// signal cannot be left out of the decision.
func TestSaturationRulesCoverEverySignal(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	onRules := b.SaturationFromRules("engine:", models.GroupInstance, models.Filters{}, "1m")
	sigs := append(b.SaturationSignals(models.GroupInstance, models.Filters{}, time.Minute), b.SaturationStallSignal(models.GroupInstance, models.Filters{}, 5*time.Minute))
	rejected, ok := b.SaturationRejected(models.GroupInstance, models.Filters{}, time.Minute)
	require.True(t, ok, "without detection the optional signal is asked for")
	sigs = append(sigs, rejected)
	var names []string
	for _, s := range sigs {
		names = append(names, s.Name)
		_, rules := onRules[s.Name]
		why, raw := SaturationRawWhy[s.Name]
		require.True(t, rules != raw, "%s: on rules %v, raw %v", s.Name, rules, raw)
		require.True(t, rules || why != "", s.Name)
	}
	for sig := range onRules {
		require.Contains(t, names, sig)
	}
	for sig := range SaturationRawWhy {
		require.Contains(t, names, sig)
	}
}

// TestSaturationFromRulesIsTheRawSignal: each rules plan is its raw
// signal with the rate over the raw counter replaced by the recorded
// rate: the same aggregation, grouping and matchers.
func TestSaturationFromRulesIsTheRawSignal(t *testing.T) {
	f := models.Filters{Labels: []*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "model_name", "Qwen.*")}}
	tests := []struct {
		name string
		g    models.Grouping
	}{{"instance", models.GroupInstance}, {"instance and engine", models.GroupInstanceEngine}}
	raws := map[string]string{SatPreemptions: "rate(vllm:num_preemptions_total", SatCompletions: "rate(vllm:request_success_total"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
			rules := b.SaturationFromRules("engine:", tt.g, f, "1m")
			compared := 0
			for _, s := range b.SaturationSignals(tt.g, f, time.Minute) {
				rp, ok := rules[s.Name]
				if !ok {
					continue
				}
				raw := s.Expr
				require.Contains(t, raw, raws[s.Name])
				// sum by (g) (rate(vllm:x_total{m}[60s])) → sum by (g) (engine:vllm_x:rate1m{m})
				sel := raw[strings.Index(raw, "{") : strings.Index(raw, "}")+1]
				want := strings.Replace(raw, raw[strings.Index(raw, "rate("):strings.LastIndex(raw, ")")], rp.Names[0]+sel, 1)
				require.Equal(t, want, rp.Expr)
				compared++
			}
			require.Equal(t, len(raws), compared)
		})
	}
}

func TestSaturationRulesClause(t *testing.T) {
	tests := []struct {
		name    string
		signals []string
		want    string
	}{
		{"both", []string{SatPreemptions, SatCompletions}, " Read from them: completions, preemptions; every other saturation signal from raw series."},
		{"one", []string{SatCompletions}, " Read from them: completions; every other saturation signal from raw series."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.signals)
			require.Equal(t, tt.want, SaturationRulesClause(tt.signals))
			require.Equal(t, in, tt.signals, "the caller's slice is not reordered")
		})
	}
}

// TestSaturationStallFromRules: the stall signal on rules is the stall
// condition by the query's grouping with recorded inputs, for recorded
// stall windows and groupings the rules keep only.
func TestSaturationStallFromRules(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rp, ok := b.SaturationStallFromRules("engine:", models.GroupModel, models.Filters{}, 5*time.Minute)
	require.True(t, ok)
	require.Contains(t, rp.Expr, "sum by (model_name) (engine:vllm_num_requests_waiting:min_over_time5m)")
	require.Contains(t, rp.Expr, "sum by (model_name) (engine:vllm_request_success:increase5m) > 0")
	back, _ := b.StalledSeenFromRules("engine:", []string{"model_name"}, models.Filters{}, 5*time.Minute)
	require.Equal(t, back, rp)
	_, ok = b.SaturationStallFromRules("engine:", models.GroupRole, models.Filters{}, 5*time.Minute)
	require.False(t, ok, "roles are summed away")
	_, ok = b.SaturationStallFromRules("engine:", models.GroupModel, models.Filters{}, 4*time.Minute)
	require.False(t, ok, "4m is not recorded")
}
