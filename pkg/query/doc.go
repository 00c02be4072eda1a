// Package query executes the plugin's query types: for each query of a
// QueryData request it validates the query (models), works out the step
// (interval), writes PromQL (vllm), fetches it (prom) and builds frames
// (frames). Queries run concurrently with a bounded pool, identical PromQL
// in one request is fetched once, and one failing query never fails the
// others.
package query
