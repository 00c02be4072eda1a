package sim

import (
	"errors"
	"fmt"
	"maps"
	"math"
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

	// MaxNumQueuedReqs and MaxNumQueuedTokens are vLLM's
	// --max-num-queued-reqs and --max-num-queued-tokens (admission control
	// in the API server, vllm/v1/engine/async_llm.py check_admission): an
	// arrival is refused with HTTP 503 when the unfinished requests
	// (waiting and running) plus it would exceed MaxNumQueuedReqs, or else
	// when the prompt tokens of requests still in prefill (no output yet)
	// are at least MaxNumQueuedTokens. 0 means no limit (vLLM's None; vLLM's
	// own 0 refuses everything). vLLM counts across the data-parallel
	// ranks behind one API server; the simulator applies the limits per
	// engine, which is the same for one engine per instance. A refused
	// request reaches no engine metric; a 0.32 instance counts it in
	// vllm:admission_rejections_total{reason}.
	MaxNumQueuedReqs   int `json:"max_num_queued_reqs"`
	MaxNumQueuedTokens int `json:"max_num_queued_tokens"`

	// SchedulingPolicy is vLLM's --scheduling-policy: "fcfs" (the default;
	// "" means fcfs) or "priority": the waiting queue is served in
	// (priority, arrival) order, lower priority first, and a KV-short step
	// preempts the running request with the highest priority value, the
	// latest arrival among equals. PriorityMix draws each arrival's
	// priority. A V1 instance of release 0.32 then writes the priority
	// label on its finished-request families, vllm:request_priority and
	// scheduler_policy_info{policy="priority"} 1; older releases schedule
	// the same way without them.
	SchedulingPolicy string      `json:"scheduling_policy"`
	PriorityMix      PriorityMix `json:"priority_mix"`

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

	// ErrorRate is the fraction of requests the engine finishes with
	// finished_reason="error" after some of their output (an internal
	// error); they reach every finished-request metric (see finish).
	ErrorRate float64 `json:"error_rate"`

	// SpecTokens turns on speculative decoding (V1 only; 0 = off): every
	// decode step of a running request verifies this many draft tokens.
	// Draft position i is accepted when position i-1 was and a draw falls
	// below SpecAcceptance, so P(position i accepted) = SpecAcceptance^(i+1);
	// the step emits the accepted tokens plus one.
	SpecTokens     int     `json:"num_speculative_tokens"`
	SpecAcceptance float64 `json:"spec_acceptance"`

	// LoRAAdapters turns on LoRA (V1 only; 0 = off): each request asks for
	// one of this many adapters, adapter-0 … adapter-N-1, Zipf-skewed so
	// the first few are hot. MaxLoRAs is vLLM's --max-loras: a waiting
	// request is admitted only when its adapter already runs or fewer than
	// MaxLoRAs distinct adapters run.
	LoRAAdapters int `json:"lora_adapters"`
	MaxLoRAs     int `json:"max_loras"`

	// KV transfer over NIXL, used by instances with a role (see
	// InstanceConfig.Role). A decode instance pulls every request's prompt
	// KV before running it: KVTransferBase + KVTransferPerToken·tokens,
	// KVBytesPerToken bytes a token. Durations are strings in JSON.
	KVTransferBase     time.Duration `json:"-"`
	KVTransferPerToken time.Duration `json:"-"`
	KVBytesPerToken    int           `json:"kv_bytes_per_token"`
	// KVTransferFailRate is the chance that one transfer fails;
	// KVNotifyFailRate the chance that the decode instance's completion
	// notification to the prefill instance fails after a good transfer;
	// KVExpireRate the chance that a prefill instance's finished request
	// has its KV expire unread (nixl_num_kv_expired_reqs_total).
	KVTransferFailRate float64 `json:"kv_transfer_fail_rate"`
	KVNotifyFailRate   float64 `json:"kv_notify_fail_rate"`
	KVExpireRate       float64 `json:"kv_expire_rate"`
	// KVLoadFailurePolicy is vLLM's kv_load_failure_policy: "fail" (vLLM's
	// default; "" means fail) finishes the request with
	// finished_reason="error", "recompute" prefills it locally instead.
	KVLoadFailurePolicy string `json:"kv_load_failure_policy"`

	// KV offloading to CPU memory (see offload.go), vLLM's
	// --kv-offloading-size (GiB of host memory for the tier, summed over
	// the tensor-parallel ranks; 0 is vLLM's None: off) and
	// --kv-offloading-backend ("native", vLLM's OffloadingConnector; ""
	// means native; "lmcache" is not simulated). An instance with
	// offloading is a V1 instance of release 0.32 without a role.
	// KVOffloadBandwidth is the GPU↔CPU copy rate in bytes per second
	// each way; PrefixPopulation is how many distinct shared prefixes
	// (system prompts, documents) the prompts' cached parts come from,
	// which sets the working set the caches must hold.
	KVOffloadingSize    float64 `json:"kv_offloading_size"`
	KVOffloadingBackend string  `json:"kv_offloading_backend"`
	KVOffloadBandwidth  float64 `json:"kv_offload_bandwidth"`
	PrefixPopulation    int     `json:"prefix_population"`
}

// KV load failure policies (vllm/config/kv_transfer.py).
const (
	KVLoadFail      = "fail"
	KVLoadRecompute = "recompute"
)

// Instance roles for prefill/decode disaggregation.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

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
		SpecAcceptance:       0.7,
		MaxLoRAs:             4,
		KVTransferBase:       5 * time.Millisecond,
		KVTransferPerToken:   10 * time.Microsecond,
		KVBytesPerToken:      131072, // Llama-3.1-8B in bf16: 2·32 layers·8 KV heads·128·2 bytes
		KVExpireRate:         0.001,
		KVLoadFailurePolicy:  KVLoadFail,
		KVOffloadingBackend:  OffloadNative,
		KVOffloadBandwidth:   20e9, // pinned host memory over PCIe Gen4 x16
		PrefixPopulation:     1024,
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
	// Role is the instance's part in prefill/decode disaggregation:
	// "" (none), "prefill" or "decode" (V1 only). Prefill instances serve
	// prompts with one output token; decode instances pull each prompt's
	// KV over NIXL first. The targets file labels them llm_isvc_role.
	Role string
	// Release is the vLLM release whose families a V1 instance exposes:
	// "" for the reference profile (upstream main of 2026-05/08), "0.32"
	// to add what 0.32 exposes besides (admission_rejections_total,
	// request_num_preemptions, scheduler_policy_info). A mixed fleet sets
	// it per instance.
	Release string
}

// Release032 is InstanceConfig.Release for vLLM 0.32.
const Release032 = "0.32"

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

	// Lean observes only the queue-time and TTFT histograms (the counters
	// and gauges are kept): a what-if twin reads nothing else, and the
	// per-token inter-token-latency histogram is most of its run time. The
	// exposition then shows the other histograms empty; what happens in
	// the fleet does not change (the histograms draw no random numbers).
	Lean bool

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
	// The simulated offload tier exports vLLM 0.32's families, so an
	// instance with it is a 0.32 instance.
	if p.KVOffloadingSize > 0 && ic.Generation == V1 && ic.Release == "" {
		ic.Release = Release032
	}
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
	if ic.Release != "" && (ic.Release != Release032 || ic.Generation == V0) {
		return fmt.Errorf("%w: release %q is not one of \"\" or %q (V1 only)", ErrInvalidConfig, ic.Release, Release032)
	}
	if err := ic.validateRole(); err != nil {
		return err
	}
	if err := ic.validateOffload(); err != nil {
		return err
	}
	if ic.Generation == V0 && ic.Engine.SchedulingPolicy == PolicyPriority {
		return fmt.Errorf("%w: scheduling_policy priority is simulated for generation v1 only", ErrInvalidConfig)
	}
	return ic.Engine.validate()
}

func (ic InstanceConfig) validateRole() error {
	switch ic.Role {
	case "":
		return nil
	case RolePrefill, RoleDecode:
	default:
		return fmt.Errorf("%w: role %q is not one of prefill, decode (or empty)", ErrInvalidConfig, ic.Role)
	}
	if ic.Generation == V0 {
		return fmt.Errorf("%w: role %q needs generation v1 (NIXL disaggregation is V1 only)", ErrInvalidConfig, ic.Role)
	}
	return nil
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
	if p.PrefixHitRate < 0 || p.PrefixHitRate > 1 || p.AbortRate < 0 || p.AbortRate > 1 || p.MaxWaiting < 0 || p.MaxNumQueuedReqs < 0 || p.MaxNumQueuedTokens < 0 ||
		p.MaxTokensSetRate < 0 || p.MaxTokensSetRate > 1 || p.EngineAbortRate < 0 || p.EngineAbortRate > 1 {
		return fmt.Errorf("%w: prefix_hit_rate, abort_rate, engine_abort_rate and max_tokens_set_rate must be in [0, 1], max_waiting, max_num_queued_reqs and max_num_queued_tokens ≥ 0",
			ErrInvalidConfig)
	}
	if p.SleepLevel < 0 || p.SleepLevel > 2 {
		return fmt.Errorf("%w: sleep_level is %d, must be 0 (awake), 1 or 2", ErrInvalidConfig, p.SleepLevel)
	}
	if p.WedgeAfter < 0 {
		return fmt.Errorf("%w: wedge_after is %v, must not be negative (0: never)", ErrInvalidConfig, p.WedgeAfter)
	}
	if err := p.validateFeatures(); err != nil {
		return err
	}
	if err := p.validatePriority(); err != nil {
		return err
	}
	if err := p.PromptTokens.validate("prompt_tokens"); err != nil {
		return err
	}
	return p.OutputTokens.validate("output_tokens")
}

// validateFeatures checks the optional features: errors, speculative
// decoding, LoRA and KV transfer.
func (p EngineParams) validateFeatures() error {
	rates := []struct {
		name string
		v    float64
	}{
		{"error_rate", p.ErrorRate}, {"spec_acceptance", p.SpecAcceptance},
		{"kv_transfer_fail_rate", p.KVTransferFailRate}, {"kv_notify_fail_rate", p.KVNotifyFailRate},
		{"kv_expire_rate", p.KVExpireRate},
	}
	for _, r := range rates {
		if r.v < 0 || r.v > 1 || math.IsNaN(r.v) {
			return fmt.Errorf("%w: %s is %v, must be in [0, 1]", ErrInvalidConfig, r.name, r.v)
		}
	}
	if p.SpecTokens < 0 || p.SpecTokens > maxSpecTokens {
		return fmt.Errorf("%w: num_speculative_tokens is %d, must be in [0, %d]", ErrInvalidConfig, p.SpecTokens, maxSpecTokens)
	}
	if p.LoRAAdapters < 0 || (p.LoRAAdapters > 0 && p.MaxLoRAs < 1) {
		return fmt.Errorf("%w: lora_adapters must be ≥ 0 and max_loras ≥ 1 when LoRA is on (got %d, %d)",
			ErrInvalidConfig, p.LoRAAdapters, p.MaxLoRAs)
	}
	if p.KVTransferBase < 0 || p.KVTransferPerToken < 0 || p.KVBytesPerToken < 0 {
		return fmt.Errorf("%w: kv_transfer_base, kv_transfer_per_token and kv_bytes_per_token must not be negative",
			ErrInvalidConfig)
	}
	switch p.KVLoadFailurePolicy {
	case "", KVLoadFail, KVLoadRecompute:
		return nil
	default:
		return fmt.Errorf("%w: kv_load_failure_policy %q is not one of fail, recompute", ErrInvalidConfig, p.KVLoadFailurePolicy)
	}
}

// maxSpecTokens bounds num_speculative_tokens; vLLM's drafters propose a
// handful of tokens, and the position label grows with it.
const maxSpecTokens = 16

// capacity is the longest sequence the engine accepts. vLLM rejects prompts
// longer than max_model_len and refuses to start when one sequence cannot
// fit in the KV cache; clipping requests to this keeps a lone request from
// preempting itself forever.
func (p EngineParams) capacity() int {
	return min(p.MaxModelLen, p.NumGPUBlocks*p.BlockSize)
}
