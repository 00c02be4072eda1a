// Package sim simulates a fleet of vLLM engines that expose vLLM's exact
// Prometheus metrics.
//
// Each simulated engine runs a model of vLLM's V1 scheduler in simulated
// time: Poisson arrivals shaped by a load profile, a FCFS waiting queue,
// continuous batching bounded by max-num-seqs and a per-step token budget
// (chunked prefill), a KV cache of fixed-size blocks, and recompute
// preemption of the newest running request when a block cannot be found.
// A step takes a + b·(sequences in batch) + c·(prefill tokens in step).
// As vLLM does today (main, 2026-08): a waiting request is admitted only
// when its whole prompt fits in the free blocks (scheduler_reserve_full_isl);
// V1's preemption counter counts a preemption when the victim's next output
// arrives, so it lags the true instants that PreemptionEvents keeps and
// misses victims whose client aborts first; client aborts reach no
// finished-request metric; an engine can be put to sleep (Fleet.SetSleep).
// As a fault, an engine can be wedged (EngineParams.WedgeAfter, Fleet.Wedge):
// it keeps answering scrapes and queueing arrivals but runs no step again.
//
// Opt-in features, each off by default and V1 only, register the
// families vLLM registers with them: speculative decoding
// (EngineParams.SpecTokens; spec_decode_*), LoRA adapters with vLLM's
// max_loras admission (EngineParams.LoRAAdapters; lora_requests_info), and
// prefill/decode disaggregation (InstanceConfig.Role), where decode
// instances pull each prompt's KV over NIXL (nixl_*, external prefix-cache
// counters, Fleet.FailKVTransfers), and vLLM's native KV offloading to
// CPU memory (EngineParams.KVOffloadingSize; kv_offload_*, a GPU prefix
// cache over shared prefixes that evicts, write-through stores and loads
// back, prompt_tokens_cached_by_source). EngineParams.ErrorRate finishes
// requests with finished_reason="error".
//
// Engines are grouped into instances. An instance is one vLLM server: one
// /metrics endpoint on one port. Several engines on one instance are
// data-parallel ranks told apart by the engine label, as vLLM does with
// --data-parallel-size. Each instance exposes one metric generation: V1
// (current names, labels model_name and engine) or V0 (legacy names, label
// model_name only).
//
// A Fleet runs in two ways. Advance moves simulated time forward by a given
// amount with no wall clock, so a test can simulate hours in milliseconds.
// Start binds one HTTP server per instance and drives every engine from a
// single goroutine at Config.Speed times wall-clock speed. Snapshot,
// PreemptionEvents and CompletedRequests read the true internal state that
// the metrics are supposed to reveal, so tests can compare the two.
//
// Runs are deterministic for a given Config.Seed: every engine draws from
// its own PCG source, and an engine's history does not depend on how
// simulated time is chopped into Advance calls or ticks.
package sim
