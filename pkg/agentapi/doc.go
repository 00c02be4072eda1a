// Package agentapi is the vllm-node-agent's API as the plugin uses it (the
// daemon itself is pkg/nodeagent): the JSON shapes
// the agent serves on /v1/gpus (shared with the agent, which imports them)
// and a Client that fetches them from many agents at once.
//
// The package is plain Go: it must never import go-nvml or anything that
// needs cgo, because the plugin binary is built with CGO_ENABLED=0.
package agentapi
