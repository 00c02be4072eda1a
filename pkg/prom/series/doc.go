// Package series holds the decoded result types of Prometheus queries,
// Series and Matrix, kept apart from the client in pkg/prom so that
// packages which only read results (the metric catalogue in pkg/vllm,
// which is fuzzed) don't pull the HTTP client, the SDK and client_golang's
// API into their build. It imports only the standard library and
// prometheus/common/model; pkg/prom aliases its types under their old names.
package series
