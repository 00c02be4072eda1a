package query

// The capacity type's GPU count and energy from the node agents (see
// pkg/vllm/capacity_gpu.go): where the agents map GPUs to a server, its
// count replaces the gpusPerServer setting and its power draw gives the
// energy per million tokens.

import (
	"context"
	"fmt"
	"math"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// agentGPUs are the node agents' GPUs by server name, and the expressions
// asked for them.
type agentGPUs struct {
	count, power map[string]float64
	exprs        []string
}

// agentGPUs reads the agents' GPU count and power. A store without agent
// series answers nothing; a failed lookup falls back to the setting.
func (c capacityPlan) agentGPUs(ctx context.Context) agentGPUs {
	countExpr, powerExpr := vllm.CapacityAgentGPUs(c.timeRange.End.Sub(c.timeRange.Start))
	a := agentGPUs{exprs: []string{countExpr}}
	count, _, err := c.memo.instantQuery(ctx, countExpr, c.timeRange.End, c.timeRange.Step)
	if err != nil || len(count) == 0 {
		return a
	}
	a.count = byServer(count)
	a.exprs = append(a.exprs, powerExpr)
	if power, _, err := c.memo.instantQuery(ctx, powerExpr, c.timeRange.End, c.timeRange.Step); err == nil {
		a.power = byServer(power)
	}
	return a
}

// byServer files each sample's value under its vllm_instance.
func byServer(v model.Vector) map[string]float64 {
	out := map[string]float64{}
	for _, s := range v {
		if name := string(s.Metric["vllm_instance"]); name != "" {
			out[name] = float64(s.Value)
		}
	}
	return out
}

// gpusOf is a server's GPU count: the agents' where they map GPUs to it,
// else the setting's.
func (a agentGPUs) gpusOf(setting int) func(string) float64 {
	return func(server string) float64 {
		if n, ok := a.count[server]; ok && n > 0 {
			return n
		}
		return float64(setting)
	}
}

// coverage counts the answer's servers and those the agents map GPUs to.
func (a agentGPUs) coverage(groups []vllm.CapacityGroup) (servers, mapped int) {
	for _, g := range groups {
		for _, srv := range g.Servers {
			servers++
			if a.count[srv.Name] > 0 {
				mapped++
			}
		}
	}
	return servers, mapped
}

// gpuNotice says where the GPU count, the energy and the price come from.
func (c capacityPlan) gpuNotice(groups []vllm.CapacityGroup) data.Notice {
	cost := c.settings.cost
	servers, mapped := c.gpus.coverage(groups)
	setting := fmt.Sprintf("%d GPU(s) per server, from the data source's gpusPerServer setting", cost.GPUsPerServer)
	if !cost.GPUsSet {
		setting = "1 GPU per server: set gpusPerServer in the data source to your tensor × pipeline parallel size"
	}
	text := "Efficiency counts " + setting
	switch {
	case mapped == servers && mapped > 0:
		text = fmt.Sprintf("Efficiency counts the GPUs the node agents map to each server (%d of %d), and energy from their power draw", mapped, servers)
	case mapped > 0:
		text = fmt.Sprintf("Efficiency counts the GPUs the node agents map to %d of %d servers and, for the others, %s; no energy figure for a group with a server the agents do not see",
			mapped, servers, setting)
	}
	if cost.GPUHourlyCost <= 0 {
		text += "; set gpuHourlyCost to price them"
	}
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: text + "."}
}

// kWhPerMTokens is energy per million generated tokens, or nil.
func kWhPerMTokens(joules float64, ok bool, tokens float64) *float64 {
	if !ok || tokens <= 0 || math.IsNaN(joules) {
		return nil
	}
	v := joules / 3.6e6 / (tokens / 1e6)
	return &v
}
