//go:build !cgo

package main

import (
	"github.com/inferops/vllm-datasource/pkg/nodeagent"
	"github.com/inferops/vllm-datasource/pkg/nodeagent/nvmlsource"
)

// openNVML fails: a build without cgo cannot load NVML.
func openNVML() (nodeagent.Source, func(), error) {
	return nil, nil, nvmlsource.ErrNoCgo
}
