package sim

import "slices"

// v1Families is what a current vLLM V1 engine (upstream main, 2026-05) with
// default options exposes, in its registration order: no LoRA, speculative
// decoding, KV connector or --kv-cache-metrics families, and no *_created
// series (as with --api-server-count > 1, the default for data parallelism).
var v1Families = buildV1Families()

// instanceFamilies is what one instance exposes: V0's profile, or V1's
// plus the opt-in families its features register, in vLLM's order:
// speculative decoding and the KV connector before everything else, LoRA
// just before cache_config_info (registered when the engine is up).
func instanceFamilies(ic InstanceConfig) []family {
	if ic.Generation == V0 {
		return v0Families
	}
	spec, lora, roles := ic.Engine.SpecTokens > 0, ic.Engine.LoRAAdapters > 0, ic.Role != ""
	if !spec && !lora && !roles && ic.Release == "" {
		return v1Families
	}
	var fams []family
	if spec {
		fams = append(fams, specFamilies()...)
	}
	if roles {
		fams = append(fams, nixlFamilies()...)
	}
	if ic.Engine.KVOffloadingSize > 0 {
		fams = append(fams, offloadFamilies()...)
	}
	base := buildV1Families()
	if ic.Release == Release032 {
		last := len(base) - 1
		r032 := release032Families()
		if ic.Engine.SchedulingPolicy == PolicyPriority {
			r032 = append(r032, requestPriorityFamily())
		}
		base = append(base[:last:last], append(r032, base[last])...)
		if ic.Role == "" {
			base = withCachedBySource(base)
		}
	}
	if lora {
		last := len(base) - 1
		base = append(base[:last:last], loraInfoV1(), base[last])
	}
	return append(fams, base...)
}

// withCachedBySource inserts prompt_tokens_cached_by_source_total after
// prompt_tokens_cached_total. A 0.32 instance with a role does not export
// it: which source vLLM books NIXL-pulled tokens under was not read.
func withCachedBySource(base []family) []family {
	i := slices.IndexFunc(base, func(f family) bool { return f.name == "vllm:prompt_tokens_cached_total" })
	return slices.Insert(base, i+1, cachedBySourceFamily())
}

func buildV1Families() []family {
	fams := []family{
		counter("vllm:estimated_flops_per_gpu_total", "Estimated number of floating point operations per GPU "+
			"(for Model Flops Utilization calculations).", zero),
		counter("vllm:estimated_read_bytes_per_gpu_total", "Estimated number of bytes read from memory per GPU "+
			"(for Model Flops Utilization calculations).", zero),
		counter("vllm:estimated_write_bytes_per_gpu_total", "Estimated number of bytes written to memory per GPU "+
			"(for Model Flops Utilization calculations).", zero),
		gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
			func(e *engine) float64 { return float64(len(e.running)) }),
		gauge("vllm:num_requests_waiting", helpWaiting, func(e *engine) float64 { return float64(e.numWaiting()) }),
		waitingByReasonV1(),
		sleepStateV1(),
		gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", (*engine).kvUsage),
		counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
			func(e *engine) float64 { return i64(e.st.prefixQueries) }),
		counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
			func(e *engine) float64 { return i64(e.st.prefixHits) }),
		counter("vllm:external_prefix_cache_queries_total", "External prefix cache queries from KV connector "+
			"cross-instance cache sharing, in terms of number of queried tokens.",
			func(e *engine) float64 { return i64(e.kv.extQueries) }),
		counter("vllm:external_prefix_cache_hits_total", "External prefix cache hits from KV connector "+
			"cross-instance cache sharing, in terms of number of cached tokens.",
			func(e *engine) float64 { return i64(e.kv.extHits) }),
		counter("vllm:mm_cache_queries_total", "Multi-modal cache queries, in terms of number of queried items.", zero),
		counter("vllm:mm_cache_hits_total", "Multi-modal cache hits, in terms of number of cached items.", zero),
	}
	fams = append(fams, commonCounters()...)
	fams = append(fams,
		promptBySourceV1(),
		counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).",
			func(e *engine) float64 { return i64(e.st.cachedPromptTokens) }),
		counter("vllm:generation_tokens_total", helpGenTok, func(e *engine) float64 { return i64(e.st.generationTokens) }),
		successFamily(V1),
	)
	fams = append(fams, requestHistograms()...)
	fams = append(fams,
		finishedHist("vllm:time_to_first_token_seconds", helpTTFT, func(h *hists) *histogram { return &h.ttft }),
		hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
			func(e *engine) *histogram { return &e.h.itl }),
		finishedHist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.",
			func(h *hists) *histogram { return &h.tpot }),
	)
	fams = append(fams, phaseHistograms("Histogram of e2e request latency in seconds.")...)
	return append(fams,
		finishedHist("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill "+
			"(excluding cached tokens).", func(h *hists) *histogram { return &h.prefillKV }),
		cacheConfigV1(),
	)
}

// waitingByReasonV1 splits the queue: deferred are requests skipped for
// the LoRA budget in the last scheduling pass and requests parked for a
// KV transfer; without LoRA or a decode role nothing is deferred.
func waitingByReasonV1() family {
	return family{"vllm:num_requests_waiting_by_reason", "Number of waiting requests by reason. Reason labels: " +
		"'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints " +
		"(LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
		"gauge", func(e *engine, w *seriesWriter) {
			deferred := e.numDeferred()
			w.sample(float64(e.numWaiting()-deferred), "reason", "capacity")
			w.sample(float64(deferred), "reason", "deferred")
		}, nil}
}

func sleepStateV1() family {
	return family{"vllm:engine_sleep_state", "Engine sleep state; awake = 0 means engine is sleeping; " +
		"awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; " +
		"discard_all = 1 means sleep level 2.", "gauge", func(e *engine, w *seriesWriter) {
		w.sample(b2f(e.sleepLevel == 0), "sleep_state", "awake")
		w.sample(b2f(e.sleepLevel == 1), "sleep_state", "weights_offloaded")
		w.sample(b2f(e.sleepLevel == 2), "sleep_state", "discard_all")
	}, nil}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func promptBySourceV1() family {
	return family{"vllm:prompt_tokens_by_source_total", "Number of prompt tokens by source.", "counter",
		func(e *engine, w *seriesWriter) {
			w.sample(i64(e.st.promptTokens-e.st.cachedPromptTokens), "source", "local_compute")
			w.sample(i64(e.st.cachedPromptTokens-e.kv.extPromptTokens), "source", "local_cache_hit")
			w.sample(i64(e.kv.extPromptTokens), "source", "external_kv_transfer")
		}, nil}
}

// cacheConfigV1 carries one label per CacheConfig.metrics_info() entry
// (upstream main, 2026-08) plus engine, and no model_name:
// prefix_match_unit, kv_cache_size_tokens and kv_cache_max_concurrency
// (KV tokens per max_model_len) are there; calculate_kv_scales and
// hash_block_size are gone.
func cacheConfigV1() family {
	return family{"vllm:cache_config_info", helpCacheConfig, "gauge", func(e *engine, w *seriesWriter) {
		kvTokens := e.p.NumGPUBlocks * e.p.BlockSize
		w.info(1,
			"_block_size_resolved", "True", "block_size", itoa(e.p.BlockSize), "cache_dtype", "auto",
			"enable_prefix_caching", pyBool(e.p.PrefixCaching),
			"engine", itoa(e.rank), "gpu_memory_utilization", pyFloat(e.p.GPUMemoryUtilization),
			"is_attention_free", "False", "kv_cache_dtype_skip_layers", "[]",
			"kv_cache_max_concurrency", pyFloat(float64(kvTokens)/float64(e.p.MaxModelLen)),
			"kv_cache_memory_bytes", "None", "kv_cache_size_tokens", itoa(kvTokens),
			"kv_offloading_backend", "native", "kv_offloading_size", offloadingSizeLabel(e.p.KVOffloadingSize),
			"kv_sharing_fast_prefill", "False", "mamba_block_size", "None", "mamba_cache_dtype", "auto",
			"mamba_cache_mode", "none", "mamba_page_size_padded", "None", "mamba_ssm_cache_dtype", "auto",
			"num_cpu_blocks", "None", "num_gpu_blocks", itoa(e.p.NumGPUBlocks), "num_gpu_blocks_override", "None",
			"prefix_caching_hash_algo", "sha256", "prefix_match_unit", itoa(e.p.BlockSize), "sliding_window", "None", "user_specified_block_size", "False",
			"user_specified_mamba_block_size", "False")
	}, nil}
}

// offloadingSizeLabel is CacheConfig.kv_offloading_size as Python prints
// it: None when off, else the GiB as a float ("4.0").
func offloadingSizeLabel(gib float64) string {
	if gib <= 0 {
		return "None"
	}
	return pyFloat(gib)
}
