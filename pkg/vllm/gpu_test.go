package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestAgentTargets: node-agent discovery lists the job's targets by
// instance, inside the agents' own selector, with the job name escaped.
func TestAgentTargets(t *testing.T) {
	tests := []struct {
		name string
		a    models.AgentSettings
		want string
	}{
		{"plain", models.AgentSettings{Job: "vllm-node-agent"}, `group by (instance) (up{job="vllm-node-agent"})`},
		{"agent selector", models.AgentSettings{Job: "agents", Selector: mustMatchers(t, `cluster="eu", namespace=~"mon|gpu"`)},
			`group by (instance) (up{cluster="eu", namespace=~"mon|gpu", job="agents"})`},
		{"quotes escaped", models.AgentSettings{Job: `a"b\c`}, `group by (instance) (up{job="a\"b\\c"})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AgentTargets(tt.a)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}
