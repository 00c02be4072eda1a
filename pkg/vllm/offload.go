package vllm

import (
	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// The vLLM 0.32 KV-offload signals the prefixCache query reads: cached
// prompt tokens by the tier their KV came from, and the offload tier's
// transfers (OffloadingConnector only).
const (
	// PromptTokensCachedBySource counts prompt tokens served from a cache
	// per tier (label source: CacheHitSource's values).
	PromptTokensCachedBySource SignalKey = "prompt_tokens_cached_by_source"
	OffloadLoadBytes           SignalKey = "kv_offload_load_bytes"
	OffloadLoadTime            SignalKey = "kv_offload_load_time"
	OffloadStoreBytes          SignalKey = "kv_offload_store_bytes"
	OffloadStoreTime           SignalKey = "kv_offload_store_time"
	OffloadAllocFailures       SignalKey = "kv_offload_allocation_failure"
)

// offloadVersions is the Versions text of the offload tier's counters.
const offloadVersions = "V1 by 0.32.0, only with vLLM's native KV offloading (--kv-offloading-size <GiB> --kv-offloading-backend native, " +
	"or --kv-transfer-config naming OffloadingConnector); each series appears with its first transfer"

// offloadCatalogue are the catalogue rows of the offload signals (facts:
// vllm/v1/metrics/cache_hit_source.py and
// vllm/backends/distributed/kv_transfer/kv_connector/v1/offloading/metrics.py;
// labels model_name and engine, source on the cached-by-source counter).
var offloadCatalogue = []Signal{
	{Key: PromptTokensCachedBySource, Kind: Counter, Unit: UnitTokens, V1: "prompt_tokens_cached_by_source_total", Labels: []string{"source"},
		Help:     "Prompt tokens served from a cache, by the tier their KV came from",
		Versions: "vllm:prompt_tokens_cached_by_source_total: V1 by 0.32.0 (host, p2p and disk only with a KV offloading tier)"},
	{Key: OffloadLoadBytes, Kind: Counter, Unit: UnitBytes, V1: "kv_offload_load_bytes_total", Help: "Bytes loaded from the offload tier to the GPU",
		Versions: "vllm:kv_offload_load_bytes_total: " + offloadVersions},
	{Key: OffloadLoadTime, Kind: Counter, Unit: UnitSeconds, V1: "kv_offload_load_time_total", Help: "Seconds spent loading from the offload tier",
		Versions: "vllm:kv_offload_load_time_total: " + offloadVersions},
	{Key: OffloadStoreBytes, Kind: Counter, Unit: UnitBytes, V1: "kv_offload_store_bytes_total", Help: "Bytes stored from the GPU to the offload tier",
		Versions: "vllm:kv_offload_store_bytes_total: " + offloadVersions},
	{Key: OffloadStoreTime, Kind: Counter, Unit: UnitSeconds, V1: "kv_offload_store_time_total", Help: "Seconds spent storing to the offload tier",
		Versions: "vllm:kv_offload_store_time_total: " + offloadVersions},
	{Key: OffloadAllocFailures, Kind: Counter, Unit: UnitCount, V1: "kv_offload_allocation_failure_total", Help: "Offload stores that could not allocate space in the tier",
		Versions: "vllm:kv_offload_allocation_failure_total: " + offloadVersions},
}

// CacheHitSources are vLLM's values of prompt_tokens_cached_by_source's
// source label (CacheHitSource, nearest tier first), in answer order.
var CacheHitSources = []string{"device", "host", "p2p", "disk", "external_unspecified"}

// Names of the prefixCache query's offload series: cached prompt tokens
// per second per tier ("cached_tokens_" + the source), and the offload
// tier's rates.
const (
	CachedTokensSignalPrefix = "cached_tokens_"
	OffloadLoadBytesSignal   = "offload_load_bytes"
	OffloadStoreBytesSignal  = "offload_store_bytes"
	OffloadLoadTimeSignal    = "offload_load_time_share"
	OffloadStoreTimeSignal   = "offload_store_time_share"
	OffloadFailuresSignal    = "offload_allocation_failures"
)

// OffloadUnits are the Grafana units of the offload series; the cached
// token rates take the frame's default unit.
var OffloadUnits = map[string]string{
	OffloadLoadBytesSignal: "Bps", OffloadStoreBytesSignal: "Bps",
	OffloadLoadTimeSignal: "percentunit", OffloadStoreTimeSignal: "percentunit", OffloadFailuresSignal: "ops",
}

// cachedBySourceSignals are the cached prompt tokens per second per tier,
// one expression per source (as the prompt tokens by source are), where
// the fleet exports the counter.
func (b Builder) cachedBySourceSignals(gl []string, f models.Filters, window string) []SignalExpr {
	if !b.optional(PromptTokensCachedBySource) {
		return nil
	}
	out := make([]SignalExpr, 0, len(CacheHitSources))
	for _, src := range CacheHitSources {
		bySrc := f
		bySrc.Labels = append(append(bySrc.Labels[:0:0], f.Labels...), labels.MustNewMatcher(labels.MatchEqual, "source", src))
		out = append(out, SignalExpr{CachedTokensSignalPrefix + src, agg("sum", gl, b.youngRateUnion(PromptTokensCachedBySource, bySrc, "", window))})
	}
	return out
}

// offloadSignals are the offload tier's bytes per second each way, the
// share of time spent loading and storing (seconds of transfer per
// second, averaged over the group's engines: overlapping transfers can
// take it above 1), and allocation failures per second, where the fleet
// exports the offload counters. vLLM creates each series at its first
// increment, so an engine that stores but never loaded or failed has no
// such series: those rates read 0 wherever the group stores (the `or`
// with 0 × the store rate), and stay absent where nothing offloads.
func (b Builder) offloadSignals(gl []string, f models.Filters, window string) []SignalExpr {
	stores := b.optional(OffloadStoreBytes)
	if !stores && !b.optional(OffloadLoadBytes) && !b.optional(OffloadAllocFailures) {
		return nil
	}
	rate := func(op string, key SignalKey) string { return agg(op, gl, b.youngRateUnion(key, f, "", window)) }
	orZero := func(expr string) string {
		if !stores {
			return expr
		}
		return expr + " or 0 * " + rate("sum", OffloadStoreBytes)
	}
	return []SignalExpr{
		{OffloadLoadBytesSignal, orZero(rate("sum", OffloadLoadBytes))},
		{OffloadStoreBytesSignal, rate("sum", OffloadStoreBytes)},
		{OffloadLoadTimeSignal, orZero(rate("avg", OffloadLoadTime))},
		{OffloadStoreTimeSignal, rate("avg", OffloadStoreTime)},
		{OffloadFailuresSignal, orZero(rate("sum", OffloadAllocFailures))},
	}
}
