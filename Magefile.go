//go:build mage

// Magefile builds the backend with the plugin SDK's build targets:
// `mage -v build:linux` writes dist/gpx_vllm_linux_amd64 (cgo-free).
package main

import (
	// mage:import
	build "github.com/grafana/grafana-plugin-sdk-go/build"
)

// Default builds the backend for every platform Grafana runs on.
var Default = build.BuildAll
