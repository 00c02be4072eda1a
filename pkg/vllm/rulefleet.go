package vllm

import "github.com/inferops/vllm-datasource/pkg/models"

// FleetFromRules are the fleet table's per-engine signals (FleetSignals)
// that the recording rules record, read from them, by signal name: the
// load gauges always, and the rates and queue/TTFT p99 when window is a
// recorded one. The others (seen, last sample, up, generation, prefix hit
// rate, stall and role) stay raw. Each is the raw expression with the
// rule's per-engine series in place of the raw ones, grouped by the same
// engine labels, so it answers the same question where RuleFit says the
// labels survive.
func (b Builder) FleetFromRules(prefix string, f models.Filters, window string) map[string]RulePlan {
	el, m := b.EngineLabels(), b.matchers(f)
	read := func(op, name, matchers string) RulePlan {
		return RulePlan{Expr: agg(op, el, selector(name, matchers)), Names: []string{name}}
	}
	out := map[string]RulePlan{
		FleetRunning: read("sum", prefix+"vllm_"+ruleGauges[Running], m),
		FleetWaiting: read("sum", prefix+"vllm_"+ruleGauges[Waiting], m),
		FleetKVUsage: read("max", prefix+"vllm_"+ruleGauges[KVUsage], m),
	}
	suffix := ruleSuffix(window)
	if suffix == "" {
		return out
	}
	failed := f
	failed.Labels = append(append(failed.Labels[:0:0], f.Labels...), finishedFailed)
	success := prefix + "vllm_request_success:" + suffix
	out[FleetRequests] = read("sum", success, m)
	out[FleetFailed] = read("sum", success, b.matchers(failed))
	out[FleetGenTokens] = read("sum", prefix+"vllm_generation_tokens:"+suffix, m)
	pre := read("sum", prefix+"vllm_num_preemptions:"+suffix, m)
	pre.Expr = "60 * " + pre.Expr
	out[FleetPreemptions] = pre
	for sig, key := range map[string]SignalKey{FleetQueueP99: QueueTime, FleetTTFTP99: TTFT} {
		bucket := ruleLatencyName(prefix, key, "_bucket", window)
		out[sig] = RulePlan{Expr: "histogram_quantile(0.99, " + agg("sum", append([]string{"le"}, el...), selector(bucket, m)) + ")",
			Names: []string{bucket}}
	}
	return out
}
