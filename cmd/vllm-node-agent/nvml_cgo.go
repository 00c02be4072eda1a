//go:build cgo

package main

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/inferops/vllm-datasource/pkg/nodeagent"
	"github.com/inferops/vllm-datasource/pkg/nodeagent/nvmlsource"
)

// openNVML loads libnvidia-ml.so.1; without it the error names the library.
func openNVML() (nodeagent.Source, func(), error) {
	src, err := nvmlsource.Open(nvml.New())
	if err != nil {
		return nil, nil, err
	}
	return src, func() { _ = src.Close() }, nil
}
