package query

// The capacity type's GPU count and energy from the node agents and, for
// the servers they do not map, dcgm-exporter (see pkg/vllm/capacity_gpu.go):
// where either maps GPUs to a server, its count replaces the gpusPerServer
// setting and its power draw gives the energy per million tokens.

import (
	"context"
	"fmt"
	"math"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// agentGPUs are the GPUs by server name that the node agents or
// dcgm-exporter map, and the expressions asked for them.
type agentGPUs struct {
	count, power map[string]float64
	exprs        []string
	// dcgm names the servers whose GPUs came from dcgm-exporter.
	dcgm map[string]bool
}

// agentGPUs reads the agents' GPU count and power. A store without agent
// series answers nothing; a failed lookup falls back to the setting.
func (c capacityPlan) agentGPUs(ctx context.Context) agentGPUs {
	countExpr, powerExpr := vllm.CapacityAgentGPUs(c.timeRange.End.Sub(c.timeRange.Start))
	a := agentGPUs{exprs: []string{countExpr}, count: map[string]float64{}, power: map[string]float64{}, dcgm: map[string]bool{}}
	count, _, err := c.memo.instantQuery(ctx, countExpr, c.timeRange.End, c.timeRange.Step)
	if err == nil && len(count) > 0 {
		a.count = byServer(count)
		a.exprs = append(a.exprs, powerExpr)
		if power, _, err := c.memo.instantQuery(ctx, powerExpr, c.timeRange.End, c.timeRange.Step); err == nil {
			a.power = byServer(power)
		}
	}
	c.addDCGM(ctx, &a)
	return a
}

// addDCGM counts dcgm-exporter's GPUs and their mean power for the servers
// the agents do not map. Only a pod identity joins a GPU to its server.
func (c capacityPlan) addDCGM(ctx context.Context, a *agentGPUs) {
	if !c.builder.PodIdentity() {
		return
	}
	expr := c.builder.CapacityDCGMPower(c.timeRange.End.Sub(c.timeRange.Start))
	a.exprs = append(a.exprs, expr)
	vec, _, err := c.memo.instantQuery(ctx, expr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		return
	}
	for _, g := range vllm.DCGMPowerGPUs(vec) {
		w := c.builder.Workload(g)
		if w == "" || (a.count[w] > 0 && !a.dcgm[w]) {
			continue
		}
		a.dcgm[w] = true
		a.count[w]++
		a.power[w] += g.Values[vllm.DCGMPower]
	}
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

// coverage counts the answer's servers, those whose GPUs are mapped, and
// of those the ones dcgm-exporter maps.
func (a agentGPUs) coverage(groups []vllm.CapacityGroup) (servers, mapped, dcgm int) {
	for _, g := range groups {
		for _, srv := range g.Servers {
			servers++
			if a.count[srv.Name] > 0 {
				mapped++
			}
			if a.dcgm[srv.Name] {
				dcgm++
			}
		}
	}
	return servers, mapped, dcgm
}

// mappers names who maps the GPUs: the node agents, dcgm-exporter or both.
func mappers(mapped, dcgm int) string {
	switch {
	case dcgm == 0:
		return "the node agents map"
	case dcgm == mapped:
		return "dcgm-exporter maps"
	default:
		return "the node agents and dcgm-exporter map"
	}
}

// gpuNotice says where the GPU count, the energy and the price come from.
func (c capacityPlan) gpuNotice(groups []vllm.CapacityGroup) data.Notice {
	cost := c.settings.cost
	servers, mapped, dcgm := c.gpus.coverage(groups)
	who := mappers(mapped, dcgm)
	setting := fmt.Sprintf("%d GPU(s) per server, from the data source's gpusPerServer setting", cost.GPUsPerServer)
	if !cost.GPUsSet {
		setting = "1 GPU per server: set gpusPerServer in the data source to your tensor × pipeline parallel size"
	}
	text := "Efficiency counts " + setting
	switch {
	case mapped == servers && mapped > 0:
		text = fmt.Sprintf("Efficiency counts the GPUs %s to each server (%d of %d), and energy from their power draw", who, mapped, servers)
	case mapped > 0:
		text = fmt.Sprintf("Efficiency counts the GPUs %s to %d of %d servers and, for the others, %s; no energy figure for a group with a server whose GPUs are not mapped",
			who, mapped, servers, setting)
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
