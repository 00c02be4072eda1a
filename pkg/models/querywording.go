package models

import "fmt"

// TypeWording is how the editor names a query type in its type picker: a
// short label and a one-line description. It is UI wording, not a rule the
// backend applies, but it lives beside the table so that adding a query
// type is one Go change: SchemaTS writes it into src/queryTypes.gen.ts.
type TypeWording struct {
	Label       string
	Description string
}

// queryWording is every query type's wording in the editor's type picker.
// SchemaTS (and so TestQueryTypesTS) fails while a type of the table lacks
// its entry or an entry names a type the table does not have.
var queryWording = map[QueryType]TypeWording{
	QueryQueue:       {"Queue depth", "Running and waiting requests"},
	QueryWaitTime:    {"Wait time", "Queue / first-token latency quantiles"},
	QueryPreemptions: {"Preemptions", "Requests preempted for lack of KV cache"},
	QueryTopK:        {"Top-k", "The k busiest servers or engines"},
	QueryGPU:         {"GPU", "GPU memory, utilisation and power, joined to the vLLM engine on it"},
	QueryFleet:       {"Fleet", "One row per engine: state, load, latency; worst first"},
	QuerySaturation:  {"Saturation", "A verdict per instance (queueing, KV-bound, …) with its evidence"},
	QuerySLO:         {"SLO", "Latency or availability objective: attainment, error budget, burn rates"},
	QueryHost:        {"Host", "CPU, memory, network and disk of the host under each instance"},
	QueryPrefixCache: {"Prefix cache", "Prefix-cache hit rate (local and KV connector) and prompt tokens/s by source"},
	QuerySpecDecode:  {"Speculative decoding", "Draft acceptance rate, mean acceptance length, acceptance by draft position"},
	QueryLoRA:        {"LoRA adapters", "The LoRA adapters in use on each server, and max_loras"},
	QueryKVTransfer:  {"KV transfer", "Prefill/decode KV-cache transfers (NIXL): time quantiles, bytes/s, failures/s"},
	QueryWorkload:    {"Workload", "Prompt and output lengths (means or heatmaps), finished requests/s, error share"},
	QueryPromQL:      {"PromQL", "Raw PromQL, for panels no vLLM query type covers"},
}

// Wording returns the editor's wording of query type qt; ok is false for a
// type without one.
func Wording(qt QueryType) (w TypeWording, ok bool) {
	w, ok = queryWording[qt]
	return w, ok
}

// checkWording is nil when every type of the table has its wording, with a
// label and a description, and no wording names a type the table lacks.
func checkWording() error {
	for _, t := range schema.Types {
		w, ok := queryWording[t.Type]
		if !ok {
			return fmt.Errorf("query type %q has no wording in pkg/models/querywording.go", t.Type)
		}
		if w.Label == "" || w.Description == "" {
			return fmt.Errorf("query type %q: wording needs a label and a description", t.Type)
		}
	}
	for qt := range queryWording {
		if _, ok := Spec(qt); !ok {
			return fmt.Errorf("pkg/models/querywording.go names query type %q, which the table does not have", qt)
		}
	}
	return nil
}
