// Package vllm knows vLLM's Prometheus metrics: the catalogue of logical
// signals and their wire names in each engine generation (V1 and the legacy
// V0), detection of which generation a Prometheus holds, and (in later
// files) the PromQL builders for each query type. Everything here is pure:
// no HTTP, no frames.
package vllm
