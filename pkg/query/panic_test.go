package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// panickingAgents is a node-agent client with a bug: it panics. The
// executor asks the agents on the query's own goroutine (not inside a
// Prometheus fetch, whose goroutine recovers on its own), so only the
// executor's per-query recovery stands between this panic and the plugin
// process.
type panickingAgents struct{}

func (panickingAgents) Fetch(context.Context, []string) agentapi.Result {
	panic("boom in the agent client")
}

// TestPanicOutsideFetchIsThatQuerysPluginError: a panic in a handler, off
// any fetch goroutine, is that query's internal plugin error; the other
// queries of the request answer and the process lives on.
func TestPanicOutsideFetchIsThatQuerysPluginError(t *testing.T) {
	tests := []struct {
		name, js string
	}{
		{name: "gpu handler asks the agents", js: `{"queryType":"gpu"}`},
		{name: "top-k table joins GPU columns after Prometheus answered", js: `{"queryType":"topk","format":"table"}`},
		{name: "fleet table joins GPU columns", js: `{"queryType":"fleet"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scripted{instant: func(string, time.Time) model.Vector { return rankingAnswer(map[string]float64{"a:8000": 3}) }}
			e := scriptedExecutor(p)
			e.Agents = panickingAgents{}
			e.Settings.Agents = models.AgentSettings{URLs: []string{"http://a:9400"}, Timeout: time.Second}
			now := time.Now()
			resp := run(t, e,
				dq("A", tt.js, now.Add(-time.Hour), now),
				dq("B", `{"queryType":"queue"}`, now.Add(-time.Hour), now),
				dq("C", `{"queryType":"promql","expr":"up"}`, now.Add(-time.Hour), now),
			)
			require.Len(t, resp.Responses, 3)
			a := resp.Responses["A"]
			require.Error(t, a.Error)
			require.Equal(t, backend.StatusInternal, a.Status)
			require.Equal(t, backend.ErrorSourcePlugin, a.ErrorSource)
			require.Contains(t, a.Error.Error(), "query A: internal error in the vLLM data source")
			require.Contains(t, a.Error.Error(), "boom in the agent client")
			for _, ref := range []string{"B", "C"} {
				require.NoError(t, resp.Responses[ref].Error, "%s still answers", ref)
				require.NotEmpty(t, resp.Responses[ref].Frames, ref)
			}
		})
	}
}
