package sim

// The families of the offload tier, in the order OffloadPromMetrics
// registers them (offloading/metrics.py at 055e47c28): the deprecated
// transfer_type families, created up front for both directions and fed
// alongside (the spec is the CPU one); the CPU spec's usage gauges; then
// the connector's flat families. The flat ones and the gauges are created
// at their first increment, observation or set (_get_prometheus_metric),
// so an engine that never loaded has no load series. The gauges are set
// from the manager's stats every engine step, so they exist once the
// engine has stepped. With a store threshold (not simulated) the CPU spec
// would add kv_offload_stores_skipped.
func offloadFamilies() []family {
	return []family{
		{name: "vllm:kv_offload_total_bytes_total", help: "Number of bytes offloaded by KV connector", typ: "counter",
			series: func(e *engine, w *seriesWriter) {
				w.sample(i64(e.off.loadBytes), "transfer_type", "CPU_to_GPU")
				w.sample(i64(e.off.storeBytes), "transfer_type", "GPU_to_CPU")
			}},
		{name: "vllm:kv_offload_total_time_total", help: "Total time measured by all KV offloading operations", typ: "counter",
			series: func(e *engine, w *seriesWriter) {
				w.sample(seconds(e.off.loadTime), "transfer_type", "CPU_to_GPU")
				w.sample(seconds(e.off.storeTime), "transfer_type", "GPU_to_CPU")
			}},
		{name: "vllm:kv_offload_size", help: "Histogram of KV offload transfer size, in bytes.", typ: "histogram",
			series: func(e *engine, w *seriesWriter) {
				w.labelledHistogram(&e.off.loadSize, "transfer_type", "CPU_to_GPU")
				w.labelledHistogram(&e.off.storeSize, "transfer_type", "GPU_to_CPU")
			}},
		offloadGauge("vllm:kv_offload_cpu_cache_usage_perc", "Fraction of CPU KV-cache space currently pinned by active "+
			"transfers (0.0 = idle, 1.0 = saturated). Sustained high values indicate transfers (stores or promotions) "+
			"may be dropped due to insufficient capacity.", func(o *offloadState) int { return o.writePending + o.readPinned }),
		offloadGauge("vllm:kv_offload_cpu_cache_write_usage_perc", "Fraction of CPU KV-cache space currently pinned by "+
			"in-flight stores that have not yet completed (0.0 = idle, 1.0 = saturated).",
			func(o *offloadState) int { return o.writePending }),
		offloadGauge("vllm:kv_offload_cpu_cache_read_usage_perc", "Fraction of CPU KV-cache space currently pinned by "+
			"in-flight loads that have not yet completed (0.0 = idle, 1.0 = saturated).",
			func(o *offloadState) int { return o.readPinned }),
		lazyCounter("vllm:kv_offload_load_bytes_total", "Total bytes loaded from offload storage to GPU.",
			func(o *offloadState) (float64, bool) { return i64(o.loadBytes), o.loads > 0 }),
		lazyCounter("vllm:kv_offload_load_time_total", "Total load time from offload storage to GPU, in seconds.",
			func(o *offloadState) (float64, bool) { return seconds(o.loadTime), o.loads > 0 }),
		lazyHist("vllm:kv_offload_load_size", "Histogram of KV offload load operation size, in bytes.",
			func(o *offloadState) *histogram { return &o.loadSize }),
		lazyCounter("vllm:kv_offload_store_bytes_total", "Total bytes stored from GPU to offload storage.",
			func(o *offloadState) (float64, bool) { return i64(o.storeBytes), o.stores > 0 }),
		lazyCounter("vllm:kv_offload_store_time_total", "Total store time from GPU to offload storage, in seconds.",
			func(o *offloadState) (float64, bool) { return seconds(o.storeTime), o.stores > 0 }),
		lazyHist("vllm:kv_offload_store_size", "Histogram of KV offload store operation size, in bytes.",
			func(o *offloadState) *histogram { return &o.storeSize }),
		lazyHist("vllm:kv_offload_lookup_sync_delay_seconds", "Histogram of the time spent in a single offload "+
			"lookup call, in seconds.", func(o *offloadState) *histogram { return &o.lookupSync }),
		// Observed only when a lookup is deferred, which the simulator
		// never does (a block still being stored is a miss): no series.
		{name: "vllm:kv_offload_lookup_async_delay_seconds", help: "Histogram of time between a request's offload lookup " +
			"first deferring and the following lookup resolving, or request finish, in seconds.", typ: "histogram",
			series: func(*engine, *seriesWriter) {}},
		lazyCounter("vllm:kv_offload_allocation_failure_total", "Number of KV offload store allocation attempts that failed.",
			func(o *offloadState) (float64, bool) { return i64(o.failures), o.failures > 0 }),
	}
}

// offloadGauge is a usage gauge: pinned blocks over the tier's blocks,
// once the engine has stepped.
func offloadGauge(name, help string, pinned func(o *offloadState) int) family {
	return family{name: name, help: help, typ: "gauge", series: func(e *engine, w *seriesWriter) {
		if e.off.stepped {
			w.sample(e.off.usage(pinned(&e.off)))
		}
	}}
}

// lazyCounter writes its one series once it has been incremented.
func lazyCounter(name, help string, v func(o *offloadState) (float64, bool)) family {
	return family{name: name, help: help, typ: "counter", series: func(e *engine, w *seriesWriter) {
		if x, ok := v(&e.off); ok {
			w.sample(x)
		}
	}}
}

// lazyHist writes its histogram once it has an observation.
func lazyHist(name, help string, h func(o *offloadState) *histogram) family {
	return family{name: name, help: help, typ: "histogram", series: func(e *engine, w *seriesWriter) {
		if hh := h(&e.off); hh.count > 0 {
			w.histogram(hh)
		}
	}}
}

// labelledHistogram writes h with one label besides the base ones.
func (w *seriesWriter) labelledHistogram(h *histogram, label, value string) {
	var cum uint64
	for i, c := range h.counts {
		cum += c
		le := "+Inf"
		if i < len(h.bounds) {
			le = pyFloat(h.bounds[i])
		}
		w.line(w.name+"_bucket", float64(cum), w.base, label, value, "le", le)
	}
	w.line(w.name+"_count", float64(h.count), w.base, label, value)
	w.line(w.name+"_sum", h.sum, w.base, label, value)
}

// cachedBySourceFamily is prompt_tokens_cached_by_source_total: the cached
// prompt tokens split by the tier their KV came from. vLLM keeps only
// non-zero per-source counts (cache_hit_source.py), so a source's series
// appears at its first token. The help text is the simulator's: vLLM's
// was not read.
func cachedBySourceFamily() family {
	return family{name: "vllm:prompt_tokens_cached_by_source_total",
		help: "Number of cached prompt tokens by the cache tier their KV came from.", typ: "counter",
		series: func(e *engine, w *seriesWriter) {
			for s, n := range e.off.bySource {
				if n > 0 {
					w.sample(i64(n), "source", cacheSourceNames[s])
				}
			}
		}}
}
