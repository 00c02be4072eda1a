package vllm

// NotCatalogued lists every vLLM family of the reference table the
// catalogue has no signal for, with why the plugin does not read it yet.
// Keys are exposed names without the "vllm:" prefix (histograms without
// _bucket/_sum/_count). TestEveryReferenceFamilyAccountedFor keeps it
// exact both ways: a family is either catalogued or listed here, never
// both, and every name listed is in the table.
var NotCatalogued = map[string]string{
	// V1 families of the 0.32 drift (issue 38).
	"scheduler_policy_info":                     "waitTime, slo, workload and queue split and filter by the priority label of the families they read and tell a fleet without it by that label; the policy gauge is not read",
	"request_priority":                          "raw priorities are not shown: queries split by the bucketed priority label of each family instead",
	"num_requests_kv_fetch_by_stage":            "its stage values were not read from vLLM's source",
	"sleep_mode_operation_duration_seconds":     "dev-mode API-server histogram (no engine label); the fleet table's sleeping state reads engine_sleep_state; durations are not shown",
	"sleep_mode_operations_in_flight":           "dev-mode API-server gauge; the fleet table's sleeping state reads engine_sleep_state",
	"rl_sleep_mode_operation_duration_seconds":  "the later name of sleep_mode_operation_duration_seconds (dev mode); durations are not shown",
	"rl_sleep_mode_operations_in_flight":        "the later name of sleep_mode_operations_in_flight (dev mode)",
	"rl_sleep_mode_operations_total":            "dev-mode count of sleep-mode calls by outcome; not shown",
	"nixl_num_notifications_after_expiry_total": "kvTransfer reads failures and expiries; late notifications are not shown yet",
	"kv_offload_load_size":                      "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_store_size":                     "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_lookup_sync_delay_seconds":      "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_lookup_async_delay_seconds":     "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_stores_skipped_total":           "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_cpu_cache_usage_perc":           "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_cpu_cache_write_usage_perc":     "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_cpu_cache_read_usage_perc":      "prefixCache reads the offload tier's bytes, time and failures; sizes, delays and usage are not shown",
	"kv_offload_total_bytes_total":              "deprecated (transfer_type CPU_to_GPU / GPU_to_CPU); replaced by kv_offload_load_*/store_*",
	"kv_offload_total_time_total":               "deprecated (transfer_type CPU_to_GPU / GPU_to_CPU); replaced by kv_offload_load_*/store_*",
	"kv_offload_size":                           "deprecated (transfer_type CPU_to_GPU / GPU_to_CPU); replaced by kv_offload_load_*/store_*",
	// Older V1 families.
	"engine_sleep_state":                    "read by the fleet table's state and health directly, not as a signal",
	"corrupted_requests_total":              "only with VLLM_COMPUTE_NANS_IN_LOGITS",
	"estimated_flops_per_gpu_total":         "only with --enable-mfu-metrics",
	"estimated_read_bytes_per_gpu_total":    "only with --enable-mfu-metrics",
	"estimated_write_bytes_per_gpu_total":   "only with --enable-mfu-metrics",
	"hf3fs_load_duration_seconds":           "only with the 3FS KV connector",
	"hf3fs_save_duration_seconds":           "only with the 3FS KV connector",
	"hf3fs_num_failed_load_total":           "only with the 3FS KV connector",
	"hf3fs_num_failed_save_total":           "only with the 3FS KV connector",
	"kv_block_lifetime_seconds":             "only with --kv-cache-metrics; no query type needs block residency yet",
	"kv_block_idle_before_evict_seconds":    "only with --kv-cache-metrics; no query type needs block residency yet",
	"kv_block_reuse_gap_seconds":            "only with --kv-cache-metrics; no query type needs block residency yet",
	"mm_cache_queries_total":                "multimodal processor cache: no query type needs it",
	"mm_cache_hits_total":                   "multimodal processor cache: no query type needs it",
	"nixl_num_descriptors":                  "NIXL detail below what kvTransfer shows",
	"nixl_post_time_seconds":                "NIXL detail below what kvTransfer shows",
	"prompt_tokens_cached_total":            "prefixCache reads prompt_tokens_by_source_total, which splits the same tokens",
	"prompt_tokens_recomputed_total":        "prefixCache reads prompt_tokens_by_source_total",
	"request_prefill_kv_computed_tokens":    "workload reads the prompt and generation lengths; computed prefill is not shown",
	"request_time_per_output_token_seconds": "waitTime reads inter-token latency per gap; per-request TPOT is not offered",
	"scheduler_queue_pressure":              "seen only in vLLM development branches",
	"websocket_connection_duration_seconds": "API-server websocket traffic, not the engine",
	"websocket_connections_active":          "API-server websocket traffic, not the engine",
	"websocket_connections_total":           "API-server websocket traffic, not the engine",
	// Both generations.
	"request_max_num_generation_tokens": "request parameters: no query type needs them",
	"request_params_n":                  "request parameters: no query type needs them",
	"request_params_max_tokens":         "request parameters: no query type needs them",
	// V0 only.
	"avg_generation_throughput_toks_per_s": "V0's logging gauge; the counters give the same rate",
	"avg_prompt_throughput_toks_per_s":     "V0's logging gauge; the counters give the same rate",
	"cpu_prefix_cache_hit_rate":            "V0's CPU (swap) cache, gone in V1",
	"model_execute_time_milliseconds":      "V0 only, with --collect-detailed-traces",
	"model_forward_time_milliseconds":      "V0 only, with --collect-detailed-traces",
	"request_params_best_of":               "V0 request parameter",
	"spec_decode_draft_acceptance_rate":    "V0 gauge; specDecode computes the rate from the counters",
	"spec_decode_efficiency":               "V0 gauge; specDecode computes the rate from the counters",
	"spec_decode_num_emitted_tokens_total": "V0 only",
	"time_in_queue_requests":               "V0's older queue-time histogram; request_queue_time_seconds replaced it",
	"tokens_total":                         "V0 only: prompt plus generation tokens, which the two counters give",
}
