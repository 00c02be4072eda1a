package vllm

// The capacity type's GPUs: how many each server has and what they draw,
// from the node agents' gauges (pkg/nodeagent's /metrics, scraped by
// Prometheus), whose vllm_instance label names the vLLM server a GPU serves,
// and, for the servers no agent maps, from dcgm-exporter, whose GPUs carry
// the pod they are allocated to. The agents' expressions take no selector:
// the agents run beside the fleet, often in another namespace (a DaemonSet
// in monitoring), so a fleet selector would not match their series; the
// answer keeps only the servers it has. dcgm-exporter's take the scope as
// the gpu query does, in either label layout.

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/common/model"
)

// CapacityAgentGPUs are instant expressions at the range's end: the GPUs
// the agents map to each server, and their power draw averaged over the
// range, summed per server (watts).
func CapacityAgentGPUs(rng time.Duration) (count, power string) {
	return "count by (vllm_instance) (vllm_node_gpu_memory_total_bytes)",
		fmt.Sprintf("sum by (vllm_instance) (avg_over_time(vllm_node_gpu_power_watts[%s]))", model.Duration(rng))
}

// CapacityDCGMPower is every GPU's mean power draw over the range from
// dcgm-exporter (watts), with the labels that join it to its pod. A range
// needs a plain selector, so each label layout has its own.
func (b Builder) CapacityDCGMPower(rng time.Duration) string {
	w := model.Duration(rng).String()
	plain := b.ScopedSelector(dcgmPowerMetric)
	exported := Builder{Scope: exportedScope(b.Scope)}.ScopedSelector(dcgmPowerMetric)
	e := "avg_over_time(" + plain + "[" + w + "])"
	if exported != plain {
		e = "(" + e + " or avg_over_time(" + exported + "[" + w + "]))"
	}
	return e
}

// dcgmPowerMetric is dcgm-exporter's power reading (watts).
const dcgmPowerMetric = "DCGM_FI_DEV_POWER_USAGE"

// DCGMPowerGPUs reads CapacityDCGMPower's answer as GPUs with their mean
// power under the power key (the range function dropped the name that
// DCGMGPUs files readings by).
func DCGMPowerGPUs(vec model.Vector) []DCGMGPU {
	named := make(model.Vector, len(vec))
	for i, s := range vec {
		m := s.Metric.Clone()
		m[model.MetricNameLabel] = dcgmPowerMetric
		named[i] = &model.Sample{Metric: m, Value: s.Value, Timestamp: s.Timestamp}
	}
	return DCGMGPUs(named)
}

// answeringSeconds is the time a server answered over the range.
func answeringSeconds(srv CapacityServer, step time.Duration) float64 {
	n := 0
	for _, w := range srv.Signals[CapWaiting] {
		if !math.IsNaN(w) {
			n++
		}
	}
	return float64(n) * step.Seconds()
}

// GPUSeconds is the group's GPU time over the range: each server's
// answering time × its GPUs (gpus gives them by server name).
func GPUSeconds(g CapacityGroup, step time.Duration, gpus func(server string) float64) float64 {
	total := 0.0
	for _, srv := range g.Servers {
		total += answeringSeconds(srv, step) * gpus(srv.Name)
	}
	return total
}

// EnergyJoules is what the group's GPUs drew over the range: each server's
// mean power (watts, by server name) × its answering time. ok is false when
// a server that answered has no power reading: a partial sum would read as
// a more efficient fleet than it is.
func EnergyJoules(g CapacityGroup, step time.Duration, power map[string]float64) (joules float64, ok bool) {
	for _, srv := range g.Servers {
		s := answeringSeconds(srv, step)
		if s == 0 {
			continue
		}
		w, has := power[srv.Name]
		if !has || math.IsNaN(w) {
			return 0, false
		}
		joules += w * s
	}
	return joules, joules > 0
}
