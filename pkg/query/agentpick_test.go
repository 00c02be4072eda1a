package query

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// hostAgents plays node agents that each report the vLLM servers on their
// own host (a map from agent host to the instances it reports), and records
// every URL it was asked.
type hostAgents struct {
	mu     sync.Mutex
	asked  []string
	serves map[string][]string
}

func (h *hostAgents) Fetch(_ context.Context, urls []string) agentapi.Result {
	h.mu.Lock()
	h.asked = append(h.asked, urls...)
	h.mu.Unlock()
	res := agentapi.Result{Time: time.Now()}
	for _, raw := range urls {
		u, _ := url.Parse(raw)
		var gpus []agentapi.GPU
		for i, in := range h.serves[u.Hostname()] {
			gpus = append(gpus, agentapi.GPU{Index: i, VLLMInstance: in})
		}
		res.Reports = append(res.Reports, agentapi.AgentReport{URL: raw, Report: agentapi.Report{Node: u.Hostname(), GPUs: gpus}})
	}
	return res
}

func TestFetchForAsksTheAgentsTheQueryNeeds(t *testing.T) {
	var urls []string
	serves := map[string][]string{}
	for i := range 1000 {
		host := fmt.Sprintf("10.0.%d.%d", i/250, i%250)
		urls = append(urls, "http://"+host+":9400")
		serves[host] = []string{host + ":8000"}
	}
	// A Kubernetes-like agent whose address is not the vLLM server's.
	urls = append(urls, "http://node-agent-x:9400")
	serves["node-agent-x"] = []string{"10.9.9.9:8000"}

	tests := []struct {
		name      string
		instances []string
		wantAsked int
		wantFound []string
	}{
		{"no instances: every agent", nil, 1001, nil},
		{"five instances on agent hosts: five agents", []string{"10.0.0.1:8000", "10.0.1.7:8000", "10.0.2.9:8000", "10.0.3.0:8000", "10.0.0.3:8000"}, 5,
			[]string{"10.0.0.1:8000", "10.0.0.3:8000", "10.0.1.7:8000", "10.0.2.9:8000", "10.0.3.0:8000"}},
		{"an instance no same-host agent reports: the rest are asked too", []string{"10.0.0.1:8000", "10.9.9.9:8000"}, 1001,
			[]string{"10.0.0.1:8000", "10.9.9.9:8000"}},
		{"instances without a host (pod names): every agent", []string{"vllm-0", "vllm-1"}, 1001, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &hostAgents{serves: serves}
			res := fetchFor(context.Background(), a, urls, tt.instances)
			require.Len(t, a.asked, tt.wantAsked)
			require.Len(t, dedupe(a.asked), tt.wantAsked, "no agent is asked twice")
			if tt.wantFound != nil {
				found := map[string]bool{}
				for _, r := range res.Reports {
					for _, g := range r.Report.GPUs {
						found[g.VLLMInstance] = true
					}
				}
				for _, in := range tt.wantFound {
					require.True(t, found[in], "GPUs of %s", in)
				}
				require.Empty(t, unreported(res, tt.instances))
			}
		})
	}
}

func dedupe(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	out := c[:0]
	for i, v := range c {
		if i == 0 || v != c[i-1] {
			out = append(out, v)
		}
	}
	return out
}
