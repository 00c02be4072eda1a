package query

import (
	"context"
	"fmt"
	"sort"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// Agents fetches GPU reports from node agents; a failing agent is an entry
// in the result's errors, never a failed call.
type Agents interface {
	Fetch(ctx context.Context, urls []string) agentapi.Result
}

// ErrNoAgents says the data source has no node agents to ask.
var ErrNoAgents = fmt.Errorf("%w: no node agents configured: list agent URLs or a discovery job in the data source settings", models.ErrInvalidQuery)

// agentURLs returns the static list, or discovers agents from the targets
// of the configured Prometheus job (the instance label is host:port).
func (p *plan) agentURLs(ctx context.Context, e *Executor) ([]string, error) {
	if len(e.Settings.Agents.URLs) > 0 {
		return e.Settings.Agents.URLs, nil
	}
	if e.Settings.Agents.Job == "" {
		return nil, ErrNoAgents
	}
	expr := vllm.AgentTargets(e.Settings.Agents)
	vec, _, err := p.memo.instantQuery(ctx, expr, p.timeRange.End, p.timeRange.Step)
	if err != nil {
		return nil, fmt.Errorf("discover node agents from job %q: %w", e.Settings.Agents.Job, err)
	}
	urls := make([]string, 0, len(vec))
	for _, s := range vec {
		urls = append(urls, "http://"+string(s.Metric[model.InstanceLabel]))
	}
	sort.Strings(urls)
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w (Prometheus has no targets for the node-agent job %q)", ErrNoAgents, e.Settings.Agents.Job)
	}
	return urls, nil
}

// fetchGPUs asks every agent and keeps the GPUs of the wanted vLLM
// instances (all when none are given).
func (p *plan) fetchGPUs(ctx context.Context, e *Executor, instances []string) (agentapi.Result, error) {
	if e.Agents == nil {
		return agentapi.Result{}, ErrNoAgents
	}
	urls, err := p.agentURLs(ctx, e)
	if err != nil {
		return agentapi.Result{}, err
	}
	res := fetchFor(ctx, e.Agents, urls, instances)
	p.podInstances(res.Reports)
	if len(instances) > 0 {
		keep := map[string]bool{}
		for _, i := range instances {
			keep[i] = true
		}
		for i := range res.Reports {
			gpus := res.Reports[i].Report.GPUs[:0:0]
			for _, g := range res.Reports[i].Report.GPUs {
				if keep[g.VLLMInstance] {
					gpus = append(gpus, g)
				}
			}
			res.Reports[i].Report.GPUs = gpus
		}
	}
	return res, nil
}

// podInstances names the vLLM server of each GPU an agent mapped to a pod
// through the kubelet (namespace/pod), where servers are identified by
// their pods; the agent's /proc mapping (host:port) stays for bare metal.
func (p *plan) podInstances(reports []agentapi.AgentReport) {
	if !p.builder.PodIdentity() {
		return
	}
	for i := range reports {
		gpus := reports[i].Report.GPUs
		for j := range gpus {
			if gpus[j].Pod != "" {
				gpus[j].VLLMInstance = p.builder.InstanceOf(map[string]string{"namespace": gpus[j].Namespace, "pod": gpus[j].Pod})
			}
		}
	}
}

// gpu answers the gpu query type, live from the agents or from Prometheus
// where the agents are scraped.
func (p *plan) gpu(ctx context.Context, o models.GPUOptions) (data.Frames, error) {
	switch o.Source {
	case "prometheus":
		return p.gpuFromPrometheus(ctx)
	case "dcgm":
		return p.gpuFromDCGM(ctx, o)
	}
	res, err := p.fetchGPUs(ctx, p.exec, p.query.Instances)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(frames.GPUNotices(res))
	if o.Format == "series" {
		return frames.GPUSeries(res.Reports, res.Time, notices), nil
	}
	return data.Frames{frames.GPUTable(res.Reports, notices)}, nil
}

func (p *plan) gpuFromPrometheus(ctx context.Context) (data.Frames, error) {
	// The agents are scrape targets: their own instance label names the node.
	f, _, err := p.series(ctx, p.builder.GPUSeries(p.query.Instances), frames.SeriesOptions{GroupLabels: []string{"instance", "gpu"}})
	return f, err
}
