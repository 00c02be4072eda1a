package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// TestAgentTargets: node-agent discovery lists the job's targets by
// instance, inside the scope, with the job name escaped.
func TestAgentTargets(t *testing.T) {
	tests := []struct {
		name string
		b    Builder
		job  string
		want string
	}{
		{"plain", Builder{}, "vllm-node-agent", `group by (instance) (up{job="vllm-node-agent"})`},
		{"scoped", Builder{Scope: mustMatchers(t, `cluster="eu", namespace=~"llm|batch"`)}, "agents",
			`group by (instance) (up{cluster="eu", namespace=~"llm|batch", job="agents"})`},
		{"quotes escaped", Builder{}, `a"b\c`, `group by (instance) (up{job="a\"b\\c"})`},
		{"prefix and identity do not apply", profileBuilder("kserve"), "j", `group by (instance) (up{job="j"})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.AgentTargets(tt.job)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}
