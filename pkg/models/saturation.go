package models

import (
	"encoding/json"
	"fmt"
	"math"
)

// Defaults of the saturation thresholds (docs/configuration.md, Saturation thresholds).
const (
	// DefaultSaturationKVHigh: KV-cache usage at or above it is "near full".
	DefaultSaturationKVHigh = 0.9
	// DefaultSaturationQueue: a mean queue of at least this many requests
	// over the rate window is a queue.
	DefaultSaturationQueue = 1.0
	// DefaultSaturationPreemptions: preemptions per second at or above it
	// are preempting (any preemption in a 1-minute window is 0.0167/s).
	DefaultSaturationPreemptions = 0.01
	// DefaultSaturationIdle: running below this share of the highest batch
	// the engine reached, with no queue, is idle.
	DefaultSaturationIdle = 0.1
)

// SaturationSettings are the thresholds of the saturation verdicts.
type SaturationSettings struct {
	KVHigh      float64
	Queue       float64
	Preemptions float64
	Idle        float64
}

// jsonSaturation is the jsonData shape the config editor writes.
type jsonSaturation struct {
	KVHigh      *float64 `json:"saturationKvHigh"`
	Queue       *float64 `json:"saturationQueue"`
	Preemptions *float64 `json:"saturationPreemptions"`
	Idle        *float64 `json:"saturationIdle"`
}

// DefaultSaturation returns the documented defaults.
func DefaultSaturation() SaturationSettings {
	return SaturationSettings{KVHigh: DefaultSaturationKVHigh, Queue: DefaultSaturationQueue,
		Preemptions: DefaultSaturationPreemptions, Idle: DefaultSaturationIdle}
}

// ParseSaturationSettings reads the thresholds from jsonData; absent ones
// take their defaults. Errors name the field and wrap ErrInvalidSettings.
func ParseSaturationSettings(jsonData []byte) (SaturationSettings, error) {
	out := DefaultSaturation()
	var js jsonSaturation
	if len(jsonData) > 0 {
		if err := json.Unmarshal(jsonData, &js); err != nil {
			return out, fmt.Errorf("%w: saturation thresholds: %v", ErrInvalidSettings, err)
		}
	}
	fields := []struct {
		name     string
		in       *float64
		out      *float64
		min, max float64
	}{
		{"saturationKvHigh", js.KVHigh, &out.KVHigh, 0, 1},
		{"saturationQueue", js.Queue, &out.Queue, 0, 1e9},
		{"saturationPreemptions", js.Preemptions, &out.Preemptions, 0, 1e9},
		{"saturationIdle", js.Idle, &out.Idle, 0, 1},
	}
	for _, f := range fields {
		if f.in == nil {
			continue
		}
		v := *f.in
		if math.IsNaN(v) || v <= f.min || v > f.max {
			return out, fmt.Errorf("%w: %s %v is out of range; allowed: more than %g, at most %g", ErrInvalidSettings, f.name, v, f.min, f.max)
		}
		*f.out = v
	}
	return out, nil
}
