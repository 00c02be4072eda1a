// Package nodeagent is the logic of vllm-node-agent, the per-node daemon
// that reports GPU readings and which vLLM server owns each GPU.
//
// Everything here is plain Go (no cgo): the HTTP server, the response cache,
// the Prometheus exposition, the /proc walk that maps GPU processes to vLLM
// servers, and the simulated GPUs. Reading real GPUs through NVML lives in
// the nvmlsource subpackage, which needs cgo; the JSON types come from
// pkg/agentapi so the plugin and the agent share one definition.
package nodeagent

import (
	"context"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// Source reads the node's GPUs. An error means no GPU could be read at all;
// a problem with one device is reported in that device's Error field.
type Source interface {
	GPUs(ctx context.Context) ([]agentapi.GPU, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context) ([]agentapi.GPU, error)

// GPUs implements Source.
func (f SourceFunc) GPUs(ctx context.Context) ([]agentapi.GPU, error) { return f(ctx) }
