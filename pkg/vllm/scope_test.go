package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func mustMatchers(t *testing.T, raw string) []*labels.Matcher {
	t.Helper()
	ms, err := models.ParseMatchers("selector", raw)
	require.NoError(t, err)
	return ms
}

// requireHas checks that a selector carries a matcher equal to want.
func requireHas(t *testing.T, got []*labels.Matcher, want *labels.Matcher, where string) {
	t.Helper()
	for _, m := range got {
		if m.Name == want.Name && m.Type == want.Type && m.Value == want.Value {
			return
		}
	}
	require.Failf(t, "missing matcher", "%s lacks %s", where, want)
}

// Every series selector of every expression the builder writes carries the
// data source's scope and the query's own matchers, exactly as parsed, even
// when they hold quotes and regex characters.
func TestScopeInEveryExpression(t *testing.T) {
	scope := mustMatchers(t, `cluster="eu-1", namespace=~"inference|batch", team="a\"b} or vector(1)"`)
	extra := mustMatchers(t, `pod!~"canary-.*"`)
	for name, b := range builders() {
		b.Scope = scope
		f := models.Filters{Models: []string{"m"}, Labels: extra}
		for _, g := range []models.Grouping{models.GroupNone, models.GroupInstanceEngine} {
			exprs := expressions(t, b, g, f)
			exprs["engine selector"] = b.EngineSelector(f)
			exprs["gpu series"] = b.GPUSeries([]string{"x"})
			exprs["agents"] = b.ScopedSelector("up", `job="vllm-node-agent"`)
			for what, expr := range exprs {
				sels := allSelectors(t, expr)
				require.NotEmpty(t, sels, "%s %s", name, what)
				for _, vs := range sels {
					for _, m := range scope {
						requireHas(t, vs.LabelMatchers, m, name+" "+what+": "+vs.String())
					}
					if what != "gpu series" && what != "agents" {
						requireHas(t, vs.LabelMatchers, extra[0], name+" "+what+": "+vs.String())
					}
				}
			}
		}
	}
}

func TestNameSelector(t *testing.T) {
	b := Builder{Prefix: "ray_vllm:", Scope: mustMatchers(t, `cluster="eu-1"`)}
	sels := allSelectors(t, b.NameSelector())
	require.Len(t, sels, 1)
	require.Equal(t, `{__name__=~"ray_vllm:.+", cluster="eu-1"}`, b.NameSelector())
	require.Equal(t, `{__name__=~"vllm:.+"}`, Builder{Prefix: "vllm:"}.NameSelector())
}

func TestScopeExpr(t *testing.T) {
	b := Builder{Scope: mustMatchers(t, `cluster="eu-1"`)}
	tests := []struct {
		name, expr, want string
		extra            string
		wantErr          bool
	}{
		{name: "rate over a range", expr: `sum by (model_name) (rate(vllm:generation_tokens_total[1m]))`,
			want: `sum by (model_name) (rate(vllm:generation_tokens_total{cluster="eu-1"}[1m]))`},
		{name: "every selector, subquery and binary", expr: `max_over_time(up[5m:1m]) / on () group_left count(up{job="x"})`,
			want: `max_over_time(up{cluster="eu-1"}[5m:1m]) / on () group_left () count(up{cluster="eu-1",job="x"})`},
		{name: "a conflicting matcher narrows, never widens", expr: `up{cluster="us-2"}`, want: `up{cluster="eu-1",cluster="us-2"}`},
		{name: "query matchers too", expr: `up`, extra: `namespace="a"`, want: `up{cluster="eu-1",namespace="a"}`},
		{name: "no selector", expr: `vector(1)`, want: `vector(1)`},
		{name: "bad PromQL", expr: `sum(`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extra []*labels.Matcher
			if tt.extra != "" {
				extra = mustMatchers(t, tt.extra)
			}
			got, err := b.ScopeExpr(tt.expr, extra)
			if tt.wantErr {
				require.ErrorContains(t, err, "selector")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	got, err := Builder{}.ScopeExpr("sum(  up )", nil)
	require.NoError(t, err)
	require.Equal(t, "sum(  up )", got, "without a scope the user's text is sent as written")
}
