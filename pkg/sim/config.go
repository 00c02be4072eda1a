package sim

import (
	"errors"
	"fmt"
	"maps"
	"time"
)

// Generation selects which vLLM engine generation's metric names and labels
// an instance exposes.
type Generation string

const (
	// V1 is the current engine: labels model_name and engine, newest names.
	V1 Generation = "v1"
	// V0 is the legacy engine (vllm/engine/metrics.py): label model_name
	// only, gpu_cache_usage_perc, num_requests_swapped and friends.
	V0 Generation = "v0"
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("invalid simulator config")

// MarshalText implements encoding.TextMarshaler.
func (g Generation) MarshalText() ([]byte, error) { return []byte(g), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts v0 and v1.
func (g *Generation) UnmarshalText(b []byte) error {
	switch s := Generation(b); s {
	case V0, V1:
		*g = s
		return nil
	default:
		return fmt.Errorf("%w: generation %q is not one of v0, v1", ErrInvalidConfig, string(b))
	}
}

// EngineParams are the knobs of one simulated engine. The defaults
// (DefaultEngineParams) describe an 8B model on one 80 GB GPU at a
// conservative memory setting; a test can shrink NumGPUBlocks to a few
// dozen to force preemptions.
type EngineParams struct {
	NumGPUBlocks        int `json:"num_gpu_blocks"`         // KV-cache blocks
	BlockSize           int `json:"block_size"`             // tokens per block
	MaxNumSeqs          int `json:"max_num_seqs"`           // running requests at most
	MaxNumBatchedTokens int `json:"max_num_batched_tokens"` // token budget per step
	MaxModelLen         int `json:"max_model_len"`          // prompt + output at most; sets token-histogram buckets
	MaxTokens           int `json:"max_tokens"`             // the requests' max_tokens; longer outputs finish with "length"

	// Step time is StepBase + StepPerSeq·(sequences in batch) +
	// StepPerPrefillToken·(prefill tokens in step). In JSON they are Go
	// duration strings ("12ms").
	StepBase            time.Duration `json:"-"`
	StepPerSeq          time.Duration `json:"-"`
	StepPerPrefillToken time.Duration `json:"-"`

	PromptTokens Dist `json:"prompt_tokens"` // prompt length distribution
	OutputTokens Dist `json:"output_tokens"` // natural output length distribution

	PrefixCaching bool    `json:"prefix_caching"`  // report prefix caching as enabled and skip cached prefill
	PrefixHitRate float64 `json:"prefix_hit_rate"` // mean fraction of a prompt found in the prefix cache
	AbortRate     float64 `json:"abort_rate"`      // fraction of requests the client aborts mid-stream (no finished metric shows them)
	MaxWaiting    int     `json:"max_waiting"`     // arrivals beyond this queue length are aborted at once; 0 = unbounded

	// EngineAbortRate is the fraction of requests the engine core itself
	// aborts mid-stream (a KV-transfer failure, say); only these count as
	// request_success_total{finished_reason="abort"}, with the usual
	// finished-request observations.
	EngineAbortRate float64 `json:"engine_abort_rate"`
	// ReserveFullISL is vLLM's scheduler_reserve_full_isl (default true
	// since 2026-03-24): a waiting request is admitted only when its whole
	// sequence fits in the free KV blocks, not just its first prefill chunk.
	ReserveFullISL bool `json:"reserve_full_isl"`
	// MaxTokensSetRate is the fraction of requests that set max_tokens;
	// the others get vLLM's default, max_model_len minus the prompt, and
	// are not observed in request_params_max_tokens.
	MaxTokensSetRate float64 `json:"max_tokens_set_rate"`
	// SleepLevel is the sleep state the engine starts in: 0 awake, 1
	// weights offloaded, 2 everything discarded. A sleeping engine serves
	// nothing; Fleet.SetSleep and the /sleep, /wake_up endpoints change it.
	SleepLevel int `json:"sleep_level"`
	// WedgeAfter wedges the engine this long after the fleet's start
	// (simulated time; 0 never): it keeps serving /metrics and /health,
	// arrivals keep queueing and its gauges stay as they are, but no step
	// runs again, so no token, request or preemption counter moves, as
	// with a hung worker or a stuck collective. Fleet.Wedge wedges at run
	// time. A duration string in JSON ("90s").
	WedgeAfter time.Duration `json:"-"`

	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"` // reported in cache_config_info only
}

// DefaultEngineParams returns realistic defaults: 8192 blocks of 16 tokens,
// max-num-seqs 256, an 8192-token step budget, decode steps of 12–38 ms.
func DefaultEngineParams() EngineParams {
	return EngineParams{
		NumGPUBlocks:         8192,
		BlockSize:            16,
		MaxNumSeqs:           256,
		MaxNumBatchedTokens:  8192,
		MaxModelLen:          8192,
		MaxTokens:            1024,
		StepBase:             12 * time.Millisecond,
		StepPerSeq:           100 * time.Microsecond,
		StepPerPrefillToken:  20 * time.Microsecond,
		PromptTokens:         Dist{Kind: LogNormal, A: 1000, B: 0.8},
		OutputTokens:         Dist{Kind: LogNormal, A: 250, B: 0.9},
		PrefixCaching:        true,
		PrefixHitRate:        0.3,
		AbortRate:            0.002,
		MaxWaiting:           10000,
		ReserveFullISL:       true,
		MaxTokensSetRate:     1,
		GPUMemoryUtilization: 0.9,
	}
}

// InstanceConfig describes one vLLM server: one port, one model, one or more
// data-parallel engines.
type InstanceConfig struct {
	Model      string        // served model name (model_name label); required
	Engines    int           // data-parallel ranks on this port; 0 means 1
	Generation Generation    // "" means V1
	Port       int           // 0: Config.BasePort+index, or a free port when BasePort is 0
	RateFactor float64       // arrival-rate multiplier (>1 makes a hot instance); 0 means 1
	Engine     *EngineParams // nil means Config.Engine
}

// Config describes a fleet. Start from DefaultConfig and set Instances.
type Config struct {
	Seed     uint64        // seeds every engine's PCG source
	Listen   string        // host Start binds; "" means 127.0.0.1
	BasePort int           // first port; 0 picks free ports
	Speed    float64       // simulated seconds per wall second in Start; 0 means 1
	Tick     time.Duration // how often Start's driver advances the engines; 0 means 50ms

	Rate    float64 // mean arrivals per second per engine, before profile, skew and RateFactor
	Profile Profile // how the arrival rate changes over simulated time
	Skew    float64 // sigma of a log-normal per-engine rate multiplier (0 = all equal)

	Engine    EngineParams // defaults for instances without their own Engine
	Instances []InstanceConfig

	PreemptionLog int // preemption events kept per engine (oldest dropped)
	RequestLog    int // completed requests kept per engine (oldest dropped)

	// HistogramBuckets replaces the bucket upper bounds of histogram
	// families, as an operator can with vLLM's custom_histogram_buckets.
	// Keys are family names without the "vllm:" prefix (for example
	// "time_to_first_token_seconds"); values are finite, strictly
	// ascending upper bounds (+Inf is implied). A key must name a histogram
	// family of V1 or V0; it applies to every instance that exposes it.
	HistogramBuckets map[string][]float64

	// Epoch is the wall time simulated time 0 maps to while the fleet is
	// driven by Advance; the zero value means the time NewFleet ran.
	Epoch time.Time
}

// DefaultConfig returns a fleet config with realistic engine defaults, a
// steady 4 requests per second per engine (about a third of an engine's
// capacity) and no instances.
func DefaultConfig() Config {
	return Config{
		Seed:          1,
		Listen:        "127.0.0.1",
		Speed:         1,
		Tick:          50 * time.Millisecond,
		Rate:          4,
		Profile:       Profile{Kind: Steady},
		Skew:          0.2,
		Engine:        DefaultEngineParams(),
		PreemptionLog: 10000,
		RequestLog:    1000,
	}
}

// normalized returns a copy with zero values replaced by their documented
// defaults, so validation and the engines see complete values.
func (c Config) normalized() Config {
	if c.Listen == "" {
		c.Listen = "127.0.0.1"
	}
	if c.Speed == 0 {
		c.Speed = 1
	}
	if c.Tick == 0 {
		c.Tick = 50 * time.Millisecond
	}
	if c.Profile.Kind == "" {
		c.Profile.Kind = Steady
	}
	if c.Epoch.IsZero() {
		c.Epoch = time.Now()
	}
	c.Instances = append([]InstanceConfig(nil), c.Instances...)
	c.HistogramBuckets = maps.Clone(c.HistogramBuckets)
	for i := range c.Instances {
		c.Instances[i] = c.Instances[i].normalized(c.Engine)
	}
	return c
}

func (ic InstanceConfig) normalized(def EngineParams) InstanceConfig {
	if ic.Engines == 0 {
		ic.Engines = 1
	}
	if ic.Generation == "" {
		ic.Generation = V1
	}
	if ic.RateFactor == 0 {
		ic.RateFactor = 1
	}
	p := def
	if ic.Engine != nil {
		p = *ic.Engine
	}
	ic.Engine = &p
	return ic
}

// validate reports the first problem with a normalized config.
func (c Config) validate() error {
	if len(c.Instances) == 0 {
		return fmt.Errorf("%w: no instances", ErrInvalidConfig)
	}
	if c.Speed < 0 || c.Tick < 0 || c.Rate < 0 || c.Skew < 0 || c.BasePort < 0 ||
		c.PreemptionLog < 0 || c.RequestLog < 0 {
		return fmt.Errorf("%w: speed, tick, rate, skew, base port and log sizes must not be negative", ErrInvalidConfig)
	}
	if c.BasePort+len(c.Instances) > 65536 {
		return fmt.Errorf("%w: base port %d leaves no room for %d instances", ErrInvalidConfig, c.BasePort, len(c.Instances))
	}
	if err := c.Profile.validate(); err != nil {
		return err
	}
	if err := validateBuckets(c.HistogramBuckets); err != nil {
		return err
	}
	for i, ic := range c.Instances {
		if err := ic.validate(); err != nil {
			return fmt.Errorf("instance %d: %w", i, err)
		}
	}
	return nil
}

func (ic InstanceConfig) validate() error {
	if ic.Model == "" {
		return fmt.Errorf("%w: model is empty", ErrInvalidConfig)
	}
	if ic.Engines < 1 || ic.RateFactor < 0 || ic.Port < 0 || ic.Port > 65535 {
		return fmt.Errorf("%w: engines must be ≥ 1, rate factor ≥ 0 and port in [0, 65535]", ErrInvalidConfig)
	}
	var g Generation
	if err := g.UnmarshalText([]byte(ic.Generation)); err != nil {
		return err
	}
	// V0 had no engine label, so data-parallel ranks on one port would
	// produce duplicate series.
	if ic.Generation == V0 && ic.Engines != 1 {
		return fmt.Errorf("%w: generation v0 has no engine label, so an instance serves exactly one engine (got %d)",
			ErrInvalidConfig, ic.Engines)
	}
	return ic.Engine.validate()
}

func (p EngineParams) validate() error {
	ints := []struct {
		name string
		v    int
	}{
		{"num_gpu_blocks", p.NumGPUBlocks}, {"block_size", p.BlockSize}, {"max_num_seqs", p.MaxNumSeqs},
		{"max_num_batched_tokens", p.MaxNumBatchedTokens}, {"max_model_len", p.MaxModelLen}, {"max_tokens", p.MaxTokens},
	}
	for _, f := range ints {
		if f.v < 1 {
			return fmt.Errorf("%w: %s is %d, must be ≥ 1", ErrInvalidConfig, f.name, f.v)
		}
	}
	if p.StepBase < 0 || p.StepPerSeq < 0 || p.StepPerPrefillToken < 0 || p.StepBase+p.StepPerSeq <= 0 {
		return fmt.Errorf("%w: step times must not be negative and a one-sequence step must take time", ErrInvalidConfig)
	}
	if p.capacity() < 2 {
		return fmt.Errorf("%w: min(max_model_len, num_gpu_blocks×block_size) must be ≥ 2 tokens", ErrInvalidConfig)
	}
	if p.PrefixHitRate < 0 || p.PrefixHitRate > 1 || p.AbortRate < 0 || p.AbortRate > 1 || p.MaxWaiting < 0 ||
		p.MaxTokensSetRate < 0 || p.MaxTokensSetRate > 1 || p.EngineAbortRate < 0 || p.EngineAbortRate > 1 {
		return fmt.Errorf("%w: prefix_hit_rate, abort_rate, engine_abort_rate and max_tokens_set_rate must be in [0, 1], max_waiting ≥ 0",
			ErrInvalidConfig)
	}
	if p.SleepLevel < 0 || p.SleepLevel > 2 {
		return fmt.Errorf("%w: sleep_level is %d, must be 0 (awake), 1 or 2", ErrInvalidConfig, p.SleepLevel)
	}
	if p.WedgeAfter < 0 {
		return fmt.Errorf("%w: wedge_after is %v, must not be negative (0: never)", ErrInvalidConfig, p.WedgeAfter)
	}
	if err := p.PromptTokens.validate("prompt_tokens"); err != nil {
		return err
	}
	return p.OutputTokens.validate("output_tokens")
}

// capacity is the longest sequence the engine accepts. vLLM rejects prompts
// longer than max_model_len and refuses to start when one sequence cannot
// fit in the KV cache; clipping requests to this keeps a lone request from
// preempting itself forever.
func (p EngineParams) capacity() int {
	return min(p.MaxModelLen, p.NumGPUBlocks*p.BlockSize)
}
