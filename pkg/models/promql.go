package models

// QueryPromQL runs raw PromQL with the plugin's step math, for the panels
// no vLLM query type covers (throughput, host context).
const QueryPromQL QueryType = "promql"

// PromQLOptions are the promql type's options.
type PromQLOptions struct {
	// Expr is the PromQL, spaces around it trimmed; it may hold Grafana's
	// interval variables ($__rate_interval, …).
	Expr string `json:"expr"`
	// Unit is the frames' unit, as Grafana names units ("reqs", "s").
	Unit string `json:"unit"`
}
