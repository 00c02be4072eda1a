package models

// QueryKVTransfer answers how KV blocks move between prefill and decode
// engines in a disaggregated fleet (vLLM's NixlConnector): transfer-time
// quantiles, bytes and transfers per second, and the failure counters.
const QueryKVTransfer QueryType = "kvTransfer"

// KVTransferOptions are the kvTransfer type's options. Its default
// grouping, role, is in the query table.
type KVTransferOptions struct {
	// Quantiles of the transfer time, in (0, 1); p50, p90, p99 by default.
	Quantiles []float64 `json:"quantiles"`
}
