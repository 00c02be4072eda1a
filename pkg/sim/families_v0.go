package sim

// v0Families is what the V0 engine (vllm/engine/metrics.py) exposes in its
// last form with the extended bucket lists (≈v0.8.4–v0.8.5) when started with
// --show-hidden-metrics-for-version=0.8, so the deprecated V0-only gauges are
// still there: label model_name only, no engine label. Opt-in families
// (speculative decoding, --collect-detailed-traces) are left out.
var v0Families = buildV0Families()

func buildV0Families() []family {
	fams := []family{
		gauge("vllm:num_requests_running", "Number of requests currently running on GPU.",
			func(e *engine) float64 { return float64(len(e.running)) }),
		gauge("vllm:num_requests_waiting", helpWaiting, func(e *engine) float64 { return float64(e.numWaiting()) }),
		loraInfoV0(),
		// The simulator preempts by recompute only, so nothing is swapped.
		gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", zero),
		gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", (*engine).kvUsage),
		gauge("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", zero),
		gauge("vllm:cpu_prefix_cache_hit_rate", "CPU prefix cache block hit rate.",
			func(e *engine) float64 { return prefixRateV0(e, 0) }),
		gauge("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.",
			func(e *engine) float64 { return prefixRateV0(e, float64(e.st.prefixHits)) }),
	}
	fams = append(fams, commonCounters()...)
	fams = append(fams,
		counter("vllm:generation_tokens_total", helpGenTok, func(e *engine) float64 { return i64(e.st.generationTokens) }),
		hist("vllm:time_to_first_token_seconds", helpTTFT, func(e *engine) *histogram { return &e.h.ttft }),
		hist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
			func(e *engine) *histogram { return &e.h.itl }),
	)
	fams = append(fams, phaseHistograms("Histogram of end to end request latency in seconds.")...)
	fams = append(fams,
		hist("vllm:time_in_queue_requests", "Histogram of time the request spent in the queue in seconds.",
			func(e *engine) *histogram { return &e.h.queue }),
		successFamily(V0),
	)
	fams = append(fams, requestHistograms()...)
	return append(fams, cacheConfigV0())
}

// prefixRateV0 is V0's hit-rate gauge: -1 when prefix caching is disabled,
// else hits over queried tokens so far.
func prefixRateV0(e *engine, hits float64) float64 {
	if !e.p.PrefixCaching {
		return -1
	}
	if e.st.prefixQueries == 0 {
		return 0
	}
	return hits / float64(e.st.prefixQueries)
}

// loraInfoV0: V0 always registered the LoRA info gauge; its value is the
// unix time of the last update.
func loraInfoV0() family {
	return family{"vllm:lora_requests_info", "Running stats on lora requests.", "gauge",
		func(_ *engine, w *seriesWriter) {
			w.info(float64(w.wall.Unix()), "max_lora", "0", "running_lora_adapters", "", "waiting_lora_adapters", "")
		}, nil}
}

// cacheConfigV0 has V0's CacheConfig attributes and no engine label.
func cacheConfigV0() family {
	return family{"vllm:cache_config_info", helpCacheConfig, "gauge", func(e *engine, w *seriesWriter) {
		w.info(1,
			"block_size", itoa(e.p.BlockSize), "cache_dtype", "auto", "cpu_offload_gb", "0",
			"enable_prefix_caching", pyBool(e.p.PrefixCaching),
			"gpu_memory_utilization", pyFloat(e.p.GPUMemoryUtilization), "is_attention_free", "False",
			"num_cpu_blocks", "2048", "num_gpu_blocks", itoa(e.p.NumGPUBlocks), "num_gpu_blocks_override", "None",
			"sliding_window", "None", "swap_space_bytes", "4294967296")
	}, nil}
}
