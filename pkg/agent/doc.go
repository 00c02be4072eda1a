// Package agent is the plugin's side of the vllm-node-agent: the JSON shapes
// the agent serves on /v1/gpus (shared with the agent, which imports them)
// and a Client that fetches them from many agents at once.
//
// The package is plain Go: it must never import go-nvml or anything that
// needs cgo, because the plugin binary is built with CGO_ENABLED=0.
package agent
