// Package nvmlsource reads real GPUs through NVML (go-nvml). It needs cgo;
// without cgo it is empty and Open reports that. The plugin never imports
// it: only cmd/vllm-node-agent does.
package nvmlsource
