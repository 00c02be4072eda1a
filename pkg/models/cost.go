package models

import (
	"encoding/json"
	"fmt"
	"math"
)

// CostSettings price the fleet's GPUs for the capacity query's efficiency
// columns (jsonData.gpusPerServer, jsonData.gpuHourlyCost).
type CostSettings struct {
	// GPUsPerServer is how many GPUs one vLLM server holds (tensor and
	// pipeline parallel ranks together); 1 when unset.
	GPUsPerServer int
	// GPUHourlyCost is what one GPU costs an hour, in the user's currency;
	// 0 when unset (then no cost column has a value).
	GPUHourlyCost float64
	// GPUsSet: gpusPerServer was set, not defaulted.
	GPUsSet bool
}

// Bounds of the cost settings.
const (
	MaxGPUsPerServer = 1024
	MaxGPUHourlyCost = 10000
)

type costJSON struct {
	GPUsPerServer json.Number `json:"gpusPerServer"`
	GPUHourlyCost json.Number `json:"gpuHourlyCost"`
}

// ParseCostSettings reads the cost settings from jsonData; every error
// names its field and wraps ErrInvalidSettings.
func ParseCostSettings(jsonData []byte) (CostSettings, error) {
	out := CostSettings{GPUsPerServer: 1}
	var js costJSON
	if len(jsonData) > 0 {
		if err := json.Unmarshal(jsonData, &js); err != nil {
			return out, fmt.Errorf("%w: gpusPerServer or gpuHourlyCost is not a number: %v", ErrInvalidSettings, err)
		}
	}
	if js.GPUsPerServer != "" {
		n, err := js.GPUsPerServer.Int64()
		if err != nil || n < 1 || n > MaxGPUsPerServer {
			return out, fmt.Errorf("%w: gpusPerServer %q is out of range; allowed: whole numbers 1 to %d (default 1)",
				ErrInvalidSettings, js.GPUsPerServer.String(), MaxGPUsPerServer)
		}
		out.GPUsPerServer, out.GPUsSet = int(n), true
	}
	if js.GPUHourlyCost != "" {
		v, err := js.GPUHourlyCost.Float64()
		if err != nil || math.IsNaN(v) || v < 0 || v > MaxGPUHourlyCost {
			return out, fmt.Errorf("%w: gpuHourlyCost %q is out of range; allowed: 0 to %d per GPU-hour (0 or unset: no cost columns)",
				ErrInvalidSettings, js.GPUHourlyCost.String(), MaxGPUHourlyCost)
		}
		out.GPUHourlyCost = v
	}
	return out, nil
}
