package vllm

import (
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// The endpoint picker's gauges (llm-d / Gateway API Inference Extension),
// which dual-emits legacy inference_pool_* and current llm_d_epp_* names:
// each pair is unioned, so a dual-emitting picker counts once.
var (
	poolQueue     = []string{"inference_pool_average_queue_size", "llm_d_epp_average_queue_size"}
	poolKV        = []string{"inference_pool_average_kv_cache_utilization", "llm_d_epp_average_kv_cache_utilization"}
	poolReady     = []string{"inference_pool_ready_pods", "llm_d_epp_ready_endpoints"}
	endpointQueue = [][2]string{{"inference_pool_per_pod_queue_size", "model_server_pod"}, {"llm_d_epp_per_endpoint_queue_size", "model_server_endpoint"}}
)

// Gateway signal names, as SignalTagLabel values.
const (
	GatewayPoolQueue     = "pool_waiting"
	GatewayPoolKV        = "pool_kv_usage"
	GatewayReady         = "ready_endpoints"
	GatewayEndpointQueue = "picker_waiting"
)

// GatewaySignals are the endpoint picker's view beside the engines' own
// queue: the pool's average queue and KV usage and its ready endpoints
// (by pool, label name), and its queue per endpoint, renamed onto the pod
// label so it groups with the engine it describes. The picker's endpoint
// label holds the pod's name. Where the picker is not scraped they are
// empty, and the queue shows nothing more. Only the profiles whose stacks
// run a picker (Builder.Gateway) ask.
func (b Builder) GatewaySignals(g models.Grouping) []SignalExpr {
	if !b.Gateway {
		return nil
	}
	pool := func(names []string) string {
		var parts []string
		for _, n := range b.gatewayNames(names) {
			parts = append(parts, b.ScopedSelector(n))
		}
		return agg("max", []string{"namespace", "name"}, "("+strings.Join(parts, " or ")+")")
	}
	var ep []string
	for _, n := range endpointQueue {
		for _, name := range b.gatewayNames([]string{n[0]}) {
			ep = append(ep, "label_replace("+b.ScopedSelector(name)+`, "pod", "$1", `+quote(n[1])+`, "(.+)")`)
		}
	}
	out := []SignalExpr{
		{GatewayPoolQueue, pool(poolQueue)},
		{GatewayPoolKV, pool(poolKV)},
		{GatewayReady, pool(poolReady)},
	}
	if (g == models.GroupInstance || g == models.GroupInstanceEngine) && b.PodIdentity() {
		// Per endpoint only where servers are pods: beside each engine's own.
		out = append(out, SignalExpr{GatewayEndpointQueue, agg("max", b.IdentityLabels(), "("+strings.Join(ep, " or ")+")")})
	}
	return out
}

// gatewayNames are the picker's names under every gateway prefix (KServe's
// ServiceMonitor renames them kserve_<name>).
func (b Builder) gatewayNames(names []string) []string {
	prefixes := b.GatewayPrefixes
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	out := make([]string, 0, len(names)*len(prefixes))
	for _, p := range prefixes {
		for _, n := range names {
			out = append(out, p+n)
		}
	}
	return out
}
