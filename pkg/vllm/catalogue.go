package vllm

import (
	"slices"
	"strings"
)

// Kind is the Prometheus type of a metric family.
type Kind string

// Metric kinds as vLLM exposes them.
const (
	Gauge     Kind = "gauge"
	Counter   Kind = "counter"
	Histogram Kind = "histogram"
	// Info is a gauge whose value is always 1 and whose labels carry data.
	Info Kind = "info"
)

// Unit is the Grafana unit id a signal's values are shown in.
type Unit string

// Units used by the catalogue. They are Grafana unit ids so frames can carry
// them unchanged.
const (
	UnitRequests Unit = "reqs"
	UnitSeconds  Unit = "s"
	UnitPercent  Unit = "percentunit"
	UnitTokens   Unit = "short"
	UnitCount    Unit = "short"
	UnitNone     Unit = "none"
)

// SignalKey names a logical vLLM signal, independent of its wire name.
type SignalKey string

// The logical signals the query types use.
const (
	Running          SignalKey = "running"
	Waiting          SignalKey = "waiting"
	WaitingByReason  SignalKey = "waiting_by_reason"
	Swapped          SignalKey = "swapped"
	KVUsage          SignalKey = "kv_usage"
	CPUKVUsage       SignalKey = "cpu_kv_usage"
	Preemptions      SignalKey = "preemptions"
	PromptTokens     SignalKey = "prompt_tokens"
	GenerationTokens SignalKey = "generation_tokens"
	RequestSuccess   SignalKey = "request_success"
	PrefixQueries    SignalKey = "prefix_cache_queries"
	PrefixHits       SignalKey = "prefix_cache_hits"
	PrefixHitRate    SignalKey = "prefix_cache_hit_rate"
	QueueTime        SignalKey = "queue_time"
	TTFT             SignalKey = "ttft"
	ITL              SignalKey = "itl"
	E2E              SignalKey = "e2e"
	PrefillTime      SignalKey = "prefill_time"
	DecodeTime       SignalKey = "decode_time"
	InferenceTime    SignalKey = "inference_time"
	IterationTokens  SignalKey = "iteration_tokens"
	CacheConfigInfo  SignalKey = "cache_config_info"
)

// The vLLM 0.32 signals: requests refused by the API server's queue limits
// (per server: no engine label) and preemptions per finished request.
const (
	Rejections         SignalKey = "admission_rejections"
	RequestPreemptions SignalKey = "request_num_preemptions"
)

// The per-request length histograms (the workload query's distributions).
const (
	RequestPromptTokens     SignalKey = "request_prompt_tokens"
	RequestGenerationTokens SignalKey = "request_generation_tokens"
)

// Signal describes one logical signal. V1 and V0 hold the wire names without
// the "vllm:" prefix; an empty name means that generation never had it.
// Counters include their _total suffix because that is what Prometheus
// stores; histograms are the family name without _bucket/_sum/_count.
type Signal struct {
	Key  SignalKey
	Kind Kind
	Unit Unit
	V1   string
	V0   string
	// V1Old is the name older V1 releases exported instead of (or beside)
	// V1, unioned after it (vllm:gpu_prefix_cache_*_total, V1 0.7.3–0.11).
	V1Old string
	// Labels beyond model_name and engine that the signal carries.
	Labels []string
	Help   string
	// Versions says which vLLM releases export the signal (first release
	// of each name, per the reference table), for notices when a fleet
	// does not; empty for signals no query type needs.
	Versions string
}

// catalogue is the single table of signals. Facts come from vLLM's
// vllm/engine/metrics.py (V0) and vllm/v1/metrics/loggers.py (V1); the test
// checks each row against the reference table in testdata.
var catalogue = append([]Signal{
	{Key: Running, Kind: Gauge, Unit: UnitRequests, V1: "num_requests_running", V0: "num_requests_running", Help: "Requests in the running batch", Versions: "vllm:num_requests_running: V0 from 0.2.3 and V1 from 0.7.1"},
	{Key: Waiting, Kind: Gauge, Unit: UnitRequests, V1: "num_requests_waiting", V0: "num_requests_waiting", Help: "Requests waiting to be scheduled", Versions: "vllm:num_requests_waiting: V0 from 0.2.3 and V1 from 0.7.1"},
	{Key: WaitingByReason, Kind: Gauge, Unit: UnitRequests, V1: "num_requests_waiting_by_reason", Labels: []string{"reason"}, Help: "Waiting requests by reason (capacity, deferred)", Versions: "vllm:num_requests_waiting_by_reason: V1 from about 0.20"},
	{Key: Swapped, Kind: Gauge, Unit: UnitRequests, V0: "num_requests_swapped", Help: "Requests swapped to CPU (V0 only)", Versions: "vllm:num_requests_swapped: V0 only, from 0.2.3 until 0.9.1 (hidden from 0.8.3 unless --show-hidden-metrics-for-version)"},
	{Key: Rejections, Kind: Counter, Unit: UnitRequests, V1: "admission_rejections_total", Labels: []string{"reason"},
		Help:     "Requests refused by the queue limits (--max-num-queued-reqs, --max-num-queued-tokens), per API server",
		Versions: "vllm:admission_rejections_total: V1 from 0.32.0, counted per API server (no engine label)"},
	{Key: RequestPreemptions, Kind: Histogram, Unit: UnitCount, V1: "request_num_preemptions", Help: "Preemptions per finished request",
		Versions: "vllm:request_num_preemptions: V1 from about 0.30"},
	{Key: KVUsage, Kind: Gauge, Unit: UnitPercent, V1: "kv_cache_usage_perc", V0: "gpu_cache_usage_perc", Help: "KV-cache usage (0 to 1)", Versions: "vllm:kv_cache_usage_perc: V1 from 0.9.2; vllm:gpu_cache_usage_perc: V0 from 0.2.3 and V1 from 0.7.1 until 0.12.0"},
	{Key: CPUKVUsage, Kind: Gauge, Unit: UnitPercent, V0: "cpu_cache_usage_perc", Help: "CPU KV-cache usage (V0 only)"},
	{Key: Preemptions, Kind: Counter, Unit: UnitCount, V1: "num_preemptions_total", V0: "num_preemptions_total", Help: "Cumulative preemptions", Versions: "vllm:num_preemptions_total: V0 from 0.4.3 and V1 from 0.8.0"},
	{Key: PromptTokens, Kind: Counter, Unit: UnitTokens, V1: "prompt_tokens_total", V0: "prompt_tokens_total", Help: "Prefill tokens processed"},
	{Key: GenerationTokens, Kind: Counter, Unit: UnitTokens, V1: "generation_tokens_total", V0: "generation_tokens_total", Help: "Generation tokens processed"},
	{Key: RequestSuccess, Kind: Counter, Unit: UnitRequests, V1: "request_success_total", V0: "request_success_total", Labels: []string{"finished_reason"}, Help: "Finished requests by reason",
		Versions: "vllm:request_success_total: V0 from 0.4.2 and V1 from 0.7.2; finished_reason=\"error\" in V1 only, from about 0.13"},
	{Key: RequestPromptTokens, Kind: Histogram, Unit: UnitTokens, V1: "request_prompt_tokens", V0: "request_prompt_tokens", Help: "Prompt tokens per finished request",
		Versions: "vllm:request_prompt_tokens: V0 from 0.4.2 and V1 from 0.7.1"},
	{Key: RequestGenerationTokens, Kind: Histogram, Unit: UnitTokens, V1: "request_generation_tokens", V0: "request_generation_tokens", Help: "Generated tokens per finished request",
		Versions: "vllm:request_generation_tokens: V0 from 0.4.2 and V1 from 0.7.1"},
	{Key: PrefixQueries, Kind: Counter, Unit: UnitTokens, V1: "prefix_cache_queries_total", V1Old: "gpu_prefix_cache_queries_total", Help: "Prefix-cache queried tokens",
		Versions: "vllm:prefix_cache_queries_total: V1 from 0.9.2; vllm:gpu_prefix_cache_queries_total: V1 from 0.7.3 until 0.12.0"},
	{Key: PrefixHits, Kind: Counter, Unit: UnitTokens, V1: "prefix_cache_hits_total", V1Old: "gpu_prefix_cache_hits_total", Help: "Prefix-cache hit tokens",
		Versions: "vllm:prefix_cache_hits_total: V1 from 0.9.2; vllm:gpu_prefix_cache_hits_total: V1 from 0.7.3 until 0.12.0"},
	{Key: PrefixHitRate, Kind: Gauge, Unit: UnitPercent, V0: "gpu_prefix_cache_hit_rate", Help: "GPU prefix-cache hit rate (V0 only)",
		Versions: "vllm:gpu_prefix_cache_hit_rate: V0 from 0.5.5 until 0.9.1"},
	{Key: ExternalPrefixQueries, Kind: Counter, Unit: UnitTokens, V1: "external_prefix_cache_queries_total", Help: "External (KV-connector) prefix-cache queried tokens",
		Versions: "vllm:external_prefix_cache_queries_total: V1 from about 0.11.1"},
	{Key: ExternalPrefixHits, Kind: Counter, Unit: UnitTokens, V1: "external_prefix_cache_hits_total", Help: "External (KV-connector) prefix-cache hit tokens",
		Versions: "vllm:external_prefix_cache_hits_total: V1 from about 0.11.1"},
	{Key: PromptTokensBySource, Kind: Counter, Unit: UnitTokens, V1: "prompt_tokens_by_source_total", Labels: []string{"source"}, Help: "Prompt tokens by source",
		Versions: "vllm:prompt_tokens_by_source_total: V1 from 0.16.0"},
	{Key: QueueTime, Kind: Histogram, Unit: UnitSeconds, V1: "request_queue_time_seconds", V0: "request_queue_time_seconds", Help: "Time requests spent waiting", Versions: "vllm:request_queue_time_seconds: V0 from 0.6.4 and V1 from 0.7.3"},
	{Key: TTFT, Kind: Histogram, Unit: UnitSeconds, V1: "time_to_first_token_seconds", V0: "time_to_first_token_seconds", Help: "Time to first token", Versions: "vllm:time_to_first_token_seconds: V0 from 0.3.1 and V1 from 0.7.1"},
	{Key: ITL, Kind: Histogram, Unit: UnitSeconds, V1: "inter_token_latency_seconds", V0: "time_per_output_token_seconds", Help: "inter-token latency", Versions: "vllm:inter_token_latency_seconds: V1 from 0.11.0; vllm:time_per_output_token_seconds: V0 from 0.3.1 and V1 from 0.7.1 until 0.15"},
	{Key: E2E, Kind: Histogram, Unit: UnitSeconds, V1: "e2e_request_latency_seconds", V0: "e2e_request_latency_seconds", Help: "End-to-end request latency", Versions: "vllm:e2e_request_latency_seconds: V0 from 0.3.1 and V1 from 0.7.3"},
	{Key: PrefillTime, Kind: Histogram, Unit: UnitSeconds, V1: "request_prefill_time_seconds", V0: "request_prefill_time_seconds", Help: "Time in prefill", Versions: "vllm:request_prefill_time_seconds: V0 from 0.6.4 and V1 from 0.7.3"},
	{Key: DecodeTime, Kind: Histogram, Unit: UnitSeconds, V1: "request_decode_time_seconds", V0: "request_decode_time_seconds", Help: "Time in decode", Versions: "vllm:request_decode_time_seconds: V0 from 0.6.4 and V1 from 0.7.3"},
	{Key: InferenceTime, Kind: Histogram, Unit: UnitSeconds, V1: "request_inference_time_seconds", V0: "request_inference_time_seconds", Help: "Time running (prefill + decode)", Versions: "vllm:request_inference_time_seconds: V0 from 0.6.4 and V1 from 0.7.3"},
	{Key: IterationTokens, Kind: Histogram, Unit: UnitTokens, V1: "iteration_tokens_total", V0: "iteration_tokens_total", Help: "Tokens per engine step"},
	{Key: CacheConfigInfo, Kind: Info, Unit: UnitNone, V1: "cache_config_info", V0: "cache_config_info", Help: "KV-cache configuration (labels)"},
	{Key: SpecDrafts, Kind: Counter, Unit: UnitCount, V1: "spec_decode_num_drafts_total", Help: "Speculative-decoding drafts proposed",
		Versions: "vllm:spec_decode_num_drafts_total: V1 from about 0.8.5, with --speculative-config"},
	{Key: SpecDraftTokens, Kind: Counter, Unit: UnitTokens, V1: "spec_decode_num_draft_tokens_total", V0: "spec_decode_num_draft_tokens_total", Help: "Draft tokens proposed",
		Versions: "vllm:spec_decode_num_draft_tokens_total: V0 from 0.5.3 until 0.10.0 and V1 from 0.8.3, with --speculative-config"},
	{Key: SpecAcceptedTokens, Kind: Counter, Unit: UnitTokens, V1: "spec_decode_num_accepted_tokens_total", V0: "spec_decode_num_accepted_tokens_total", Help: "Draft tokens accepted",
		Versions: "vllm:spec_decode_num_accepted_tokens_total: V0 from 0.5.3 until 0.10.0 and V1 from 0.8.3, with --speculative-config"},
	{Key: SpecAcceptedPerPos, Kind: Counter, Unit: UnitTokens, V1: "spec_decode_num_accepted_tokens_per_pos_total", Labels: []string{"position"}, Help: "Draft tokens accepted by draft position",
		Versions: "vllm:spec_decode_num_accepted_tokens_per_pos_total: V1 from about 0.8.5, with --speculative-config"},
	{Key: LoRAInfo, Kind: Gauge, Unit: UnitNone, V1: "lora_requests_info", V0: "lora_requests_info", Labels: []string{"max_lora", "running_lora_adapters", "waiting_lora_adapters"},
		Help:     "LoRA adapters running and waiting (labels; the value is the unix time they were current)",
		Versions: "vllm:lora_requests_info: V0 from 0.6.4 (always, max_lora=\"0\" without LoRA) and V1 from 0.8.0 (with --enable-lora)"},
}, append(kvTransferCatalogue, offloadCatalogue...)...) // NIXL KV transfer: kvtransfer.go; KV offload: offload.go

var byKey = func() map[SignalKey]Signal {
	m := make(map[SignalKey]Signal, len(catalogue))
	for _, s := range catalogue {
		m[s.Key] = s
	}
	return m
}()

// Lookup returns the signal for key.
func Lookup(key SignalKey) (Signal, bool) {
	s, ok := byKey[key]
	return s, ok
}

// Signals returns a copy of the whole catalogue in a stable order.
func Signals() []Signal {
	out := make([]Signal, len(catalogue))
	copy(out, catalogue)
	return out
}

// WireNames returns the distinct wire names of the signal for a metric
// prefix, V1 first. A mixed fleet needs both, so queries union them.
func (s Signal) WireNames(prefix string) []string {
	var out []string
	for _, n := range []string{s.V1, s.V1Old, s.V0} {
		if n == "" {
			continue
		}
		full := prefix + n
		if !slices.Contains(out, full) {
			out = append(out, full)
		}
	}
	return out
}

// Name returns the wire name in one generation, or "" when that generation
// has no such metric.
func (s Signal) Name(gen Generation, prefix string) string {
	base := s.V1
	if gen == GenV0 {
		base = s.V0
	}
	if base == "" {
		return ""
	}
	return prefix + base
}

// Names that only one engine generation ever exposed, per the reference
// table. Names that both had (gpu_cache_usage_perc and
// time_per_output_token_seconds lived on in V1 until 0.12 and 0.15) are
// deliberately absent: they say nothing about the generation.
var (
	v1Markers = []string{
		"kv_cache_usage_perc", "num_requests_waiting_by_reason", "prefix_cache_queries_total",
		"prefix_cache_hits_total", "gpu_prefix_cache_queries_total", "gpu_prefix_cache_hits_total",
		"inter_token_latency_seconds", "request_time_per_output_token_seconds", "engine_sleep_state",
		"request_prefill_kv_computed_tokens",
	}
	v0Markers = []string{
		"num_requests_swapped", "cpu_cache_usage_perc", "gpu_prefix_cache_hit_rate",
		"cpu_prefix_cache_hit_rate", "time_in_queue_requests", "avg_prompt_throughput_toks_per_s",
		"avg_generation_throughput_toks_per_s", "model_forward_time_milliseconds",
		"model_execute_time_milliseconds", "spec_decode_draft_acceptance_rate",
	}
)

// baseName strips the prefix and any histogram series suffix from a wire name.
func baseName(name, prefix string) (string, bool) {
	if !strings.HasPrefix(name, prefix) {
		return "", false
	}
	n := strings.TrimPrefix(name, prefix)
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if trimmed, ok := strings.CutSuffix(n, suf); ok && isHistogramBase(trimmed) {
			return trimmed, true
		}
	}
	return n, true
}

// isHistogramBase reports whether a base name is a histogram in either generation.
func isHistogramBase(n string) bool {
	for _, s := range catalogue {
		if s.Kind == Histogram && (s.V1 == n || s.V0 == n) {
			return true
		}
	}
	switch n {
	case "time_in_queue_requests", "request_time_per_output_token_seconds", "request_prefill_kv_computed_tokens",
		"model_forward_time_milliseconds", "model_execute_time_milliseconds":
		return true
	}
	return false
}
