package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestQueryMatchersWithoutScope: a query's own matchers narrow its
// selectors when the data source has no selector, exactly as when it has
// one: in raw PromQL and in the builder's expressions.
func TestQueryMatchersWithoutScope(t *testing.T) {
	own := mustMatchers(t, `namespace="team-a"`)
	tests := []struct {
		name, scope, expr, want string
	}{
		{name: "no scope", expr: `sum(rate(vllm:generation_tokens_total[1m])) / count(up)`,
			want: `sum(rate(vllm:generation_tokens_total{namespace="team-a"}[1m])) / count(up{namespace="team-a"})`},
		{name: "with a scope", scope: `cluster="eu-1"`, expr: `up`, want: `up{cluster="eu-1",namespace="team-a"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
			if tt.scope != "" {
				b.Scope = mustMatchers(t, tt.scope)
			}
			got, err := b.ScopeExpr(tt.expr, own)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)

			f := models.Filters{Labels: own}
			for _, sig := range b.QueueSignals(models.GroupInstance, f) {
				for _, vs := range allSelectors(t, sig.Expr) {
					requireHas(t, vs.LabelMatchers, own[0], sig.Name)
					for _, m := range b.Scope {
						requireHas(t, vs.LabelMatchers, m, sig.Name)
					}
				}
			}
		})
	}
}
