package query

import (
	"context"
	"net"
	"net/url"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// fetchFor asks the agents the wanted vLLM instances need: on bare metal the
// node agent runs on the same host as the vLLM servers whose GPUs it
// reports, so the agents whose host is the host of a wanted instance are
// asked first, and the others only for the instances those did not report
// (an agent on another address, a Kubernetes pod IP). A top-k table of 5
// rows then asks about 5 agents instead of the whole fleet, and the answer
// is the same as asking every agent. With no instances given, or when the
// hosts tell nothing apart, every agent is asked at once.
func fetchFor(ctx context.Context, a Agents, urls, instances []string) agentapi.Result {
	first, rest := splitByHost(urls, instances)
	if len(instances) == 0 || len(first) == 0 || len(rest) == 0 {
		return a.Fetch(ctx, urls)
	}
	res := a.Fetch(ctx, first)
	if len(unreported(res, instances)) == 0 {
		return res
	}
	more := a.Fetch(ctx, rest)
	res.Reports = append(res.Reports, more.Reports...)
	res.Errors = append(res.Errors, more.Errors...)
	return res
}

// splitByHost puts the agent URLs whose host is the host of one of the
// instances (host:port) first, the rest after, each in the given order.
func splitByHost(urls, instances []string) (first, rest []string) {
	hosts := make(map[string]bool, len(instances))
	for _, in := range instances {
		if h, _, err := net.SplitHostPort(in); err == nil {
			hosts[h] = true
		} else {
			hosts[in] = true
		}
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err == nil && hosts[u.Hostname()] {
			first = append(first, raw)
		} else {
			rest = append(rest, raw)
		}
	}
	return first, rest
}

// unreported lists the instances no report has a GPU for.
func unreported(res agentapi.Result, instances []string) []string {
	seen := map[string]bool{}
	for _, r := range res.Reports {
		for _, g := range r.Report.GPUs {
			seen[g.VLLMInstance] = true
		}
	}
	var out []string
	for _, in := range instances {
		if !seen[in] {
			out = append(out, in)
		}
	}
	return out
}
