package query_test

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// askedAgents records the agent URLs a query asks and answers with empty
// reports: what matters here is which agents discovery found.
type askedAgents struct {
	mu    sync.Mutex
	asked []string
}

func (a *askedAgents) Fetch(_ context.Context, urls []string) agentapi.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, urls...)
	res := agentapi.Result{Time: time.Now()}
	for _, u := range urls {
		res.Reports = append(res.Reports, agentapi.AgentReport{URL: u})
	}
	return res
}

// TestAgentDiscoveryOutsideTheFleetNamespace: as on Kubernetes, the vLLM
// pods are in namespace inference and the agents' targets (a DaemonSet's
// pods) in monitoring, in two clusters sharing one Prometheus. A data source
// scoped to namespace="inference" still finds the agents (it found none
// when discovery inherited the whole selector); its cluster matcher still
// keeps the other cluster's agents out; agentSelector replaces the derived
// scope, and a wrong one names the job in the error.
func TestAgentDiscoveryOutsideTheFleetNamespace(t *testing.T) {
	t.Parallel()
	agentA, agentB := "127.0.0.1:1", "127.0.0.1:2" // nothing listens: up is 0, and discovery uses every target
	srv := promtest.Start(t, promtest.Options{
		Groups: []promtest.Group{{Targets: []string{"127.0.0.1:3"}, Labels: map[string]string{"cluster": "a", "namespace": "inference"}}},
		AgentGroups: []promtest.Group{
			{Targets: []string{agentA}, Labels: map[string]string{"cluster": "a", "namespace": "monitoring"}},
			{Targets: []string{agentB}, Labels: map[string]string{"cluster": "b", "namespace": "monitoring"}},
		},
	})
	// A few scrapes, so a query's end aligned down to its step has samples.
	srv.WaitForSeries(t, `count_over_time(up{job="vllm-node-agent"}[1m]) >= 3`, 2, 30*time.Second)

	tests := []struct {
		name     string
		settings map[string]string
		want     []string
		wantErr  string
	}{
		{"namespace selector: the agents in monitoring are found", map[string]string{"selector": `namespace="inference"`},
			[]string{"http://" + agentA, "http://" + agentB}, ""},
		{"cluster and namespace: only the cluster's agent", map[string]string{"selector": `cluster="a", namespace="inference"`},
			[]string{"http://" + agentA}, ""},
		{"agentSelector replaces the derived scope", map[string]string{"selector": `cluster="a"`, "agentSelector": `cluster="b", namespace="monitoring"`},
			[]string{"http://" + agentB}, ""},
		{"an agentSelector the agents do not match", map[string]string{"agentSelector": `namespace="inference"`},
			nil, `no targets for the node-agent job "vllm-node-agent"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := map[string]string{"scrapeInterval": "1s"}
			for k, v := range tt.settings {
				js[k] = v
			}
			raw, err := json.Marshal(js)
			require.NoError(t, err)
			e := settingsExecutor(t, srv.URL, string(raw))
			agents := &askedAgents{}
			e.Agents = agents
			now := time.Now()
			r := run(t, e, dq("G", `{"queryType":"gpu"}`, now.Add(-time.Minute), now)).Responses["G"]
			if tt.wantErr != "" {
				require.ErrorContains(t, r.Error, tt.wantErr)
				require.Empty(t, agents.asked)
				return
			}
			require.NoError(t, r.Error)
			sort.Strings(agents.asked)
			require.Equal(t, tt.want, agents.asked)
		})
	}
}
