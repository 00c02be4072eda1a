package vllm

import (
	"fmt"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Prefix-cache signals vLLM V1 exports beside the local hit counters.
const (
	// ExternalPrefixQueries and ExternalPrefixHits count the tokens looked
	// up in, and found in, a KV connector's cross-instance cache.
	ExternalPrefixQueries SignalKey = "external_prefix_cache_queries"
	ExternalPrefixHits    SignalKey = "external_prefix_cache_hits"
	// PromptTokensBySource splits prompt tokens by where their KV came
	// from: the label source is local_compute, local_cache_hit or
	// external_kv_transfer.
	PromptTokensBySource SignalKey = "prompt_tokens_by_source"
)

// Names of the prefixCache query's expressions (SignalExpr.Name): the
// hit rates, and one prompt-token rate per source ("prompt_tokens_" +
// the source).
const (
	PrefixHitRateSignal         = "hit_rate"
	PrefixExternalHitRateSignal = "external_hit_rate"
	PromptTokensSignalPrefix    = "prompt_tokens_"
)

// PromptTokenSources are vLLM's values of prompt_tokens_by_source's source
// label (PromptTokenStats.ALL_SOURCES), in the order the query returns them.
var PromptTokenSources = []string{"local_compute", "local_cache_hit", "external_kv_transfer"}

// PrefixCacheSignals are the prefixCache query's range expressions per
// grouping over the rate window: the local hit rate (see PrefixHitRate),
// the external (KV-connector) hit rate where the fleet exports it, the
// prompt tokens per second from each source, the cached prompt tokens per
// second by tier and the KV-offload tier's rates (see offloadSignals),
// each where the fleet exports them. Each is a plain expression so they
// run concurrently.
func (b Builder) PrefixCacheSignals(g models.Grouping, f models.Filters, window string) []SignalExpr {
	gl := b.GroupLabels(g)
	out := []SignalExpr{{PrefixHitRateSignal, b.PrefixHitRate(gl, f, window, "")}}
	if b.optional(ExternalPrefixHits) {
		out = append(out, SignalExpr{PrefixExternalHitRateSignal, b.ratio(ExternalPrefixHits, ExternalPrefixQueries, gl, f, window, "")})
	}
	if b.optional(PromptTokensBySource) {
		for _, src := range PromptTokenSources {
			bySrc := f
			bySrc.Labels = append(append(bySrc.Labels[:0:0], f.Labels...), labels.MustNewMatcher(labels.MatchEqual, "source", src))
			out = append(out, SignalExpr{PromptTokensSignalPrefix + src, agg("sum", gl, b.youngRateUnion(PromptTokensBySource, bySrc, "", window))})
		}
	}
	out = append(out, b.cachedBySourceSignals(gl, f, window)...)
	return append(out, b.offloadSignals(gl, f, window)...)
}

// PrefixHitRate is the prefix-cache hit rate per group (labels gl) over
// the rate window: the summed rate of hit tokens over the summed rate of
// queried tokens, so a busy engine weighs more than an idle one (never an
// average of ratios). A group that queried nothing has no point rather
// than NaN or Inf (the "> 0" filter). V1's counters are read under both
// names (prefix_cache_* from 0.9.2, gpu_prefix_cache_* in 0.7.3–0.11, one
// `or` so an engine exporting both counts once). V0 had only the gauge
// gpu_prefix_cache_hit_rate (-1 with prefix caching off, dropped by
// ">= 0"): it answers, averaged, for the groups without V1 counters, so a
// mixed fleet still shows one series per group. offset, when set, reads
// the window that far back (e.g. the window before).
func (b Builder) PrefixHitRate(gl []string, f models.Filters, window, offset string) string {
	var parts []string
	v1, v0 := b.optional(PrefixHits), b.optional(PrefixHitRate)
	if v1 || !v0 {
		parts = append(parts, "("+b.ratio(PrefixHits, PrefixQueries, gl, f, window, offset)+")")
	}
	if v0 {
		parts = append(parts, agg("avg", gl, "("+b.offsetUnion(PrefixHitRate, f, offset)+") >= 0"))
	}
	return or(parts)
}

// ratio is sum(rate(hits)) / (sum(rate(queries)) > 0) per group.
func (b Builder) ratio(hits, queries SignalKey, gl []string, f models.Filters, window, offset string) string {
	return agg("sum", gl, b.offsetRateUnion(hits, f, window, offset)) + " / (" +
		agg("sum", gl, b.offsetRateUnion(queries, f, window, offset)) + " > 0)"
}

// offsetRateUnion is rateUnion with an optional offset on every selector.
func (b Builder) offsetRateUnion(key SignalKey, f models.Filters, window, offset string) string {
	if offset == "" {
		return b.rateUnion(key, f, "", window)
	}
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return fmt.Sprintf("rate(%s[%s] offset %s)", selector(n, m), window, offset) })
}

// offsetUnion is union with an optional offset on every selector.
func (b Builder) offsetUnion(key SignalKey, f models.Filters, offset string) string {
	if offset == "" {
		return b.union(key, f, "")
	}
	m := b.matchers(f)
	return b.unionOfF(key, f, func(n string) string { return selector(n, m) + " offset " + offset })
}

// PrefixFamily is one group of prefix-cache metrics a fleet may lack, with
// the vLLM setting that makes engines export (or fill) it.
type PrefixFamily struct {
	// Signal is the series name the family feeds.
	Signal string
	// Keys are the catalogue signals; the family is present when any is.
	Keys []SignalKey
	// Enable says which vLLM version and setting export it.
	Enable string
	// Without says what the answer lacks without it.
	Without string
	// Idle says why an exported family can give no point.
	Idle string
}

// PrefixFamilies are the prefixCache query's families in answer order.
var PrefixFamilies = []PrefixFamily{
	{Signal: PrefixHitRateSignal, Keys: []SignalKey{PrefixHits, PrefixHitRate},
		Enable: "vLLM V1 exports vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total from 0.9.2 (vllm:gpu_prefix_cache_queries_total and " +
			"vllm:gpu_prefix_cache_hits_total from 0.7.3 until 0.12.0), and V0 the gauge vllm:gpu_prefix_cache_hit_rate (0.5.5 until 0.9.1) with " +
			"--enable-prefix-caching; V1 caches prefixes by default (--no-enable-prefix-caching turns it off)",
		Without: "the hit rate is not shown",
		Idle: "prefix caching is off on them (--no-enable-prefix-caching; vllm:cache_config_info says enable_prefix_caching) " +
			"or they served no prompt"},
	{Signal: PrefixExternalHitRateSignal, Keys: []SignalKey{ExternalPrefixHits},
		Enable: "vLLM V1 exports vllm:external_prefix_cache_queries_total and vllm:external_prefix_cache_hits_total from about 0.11.1; " +
			"they count only with a KV connector (--kv-transfer-config, e.g. LMCache or NIXL)",
		Without: "the external (KV-connector) hit rate is not shown",
		Idle:    "no KV connector is configured on them (--kv-transfer-config), or it looked nothing up"},
	{Signal: PromptTokensSignalPrefix + "*", Keys: []SignalKey{PromptTokensBySource},
		Enable:  "vLLM V1 exports vllm:prompt_tokens_by_source_total from 0.16.0",
		Without: "prompt tokens per second by source (computed, local cache hit, KV transfer) are not shown",
		Idle:    "they served no prompt"},
	{Signal: CachedTokensSignalPrefix + "*", Keys: []SignalKey{PromptTokensCachedBySource},
		Enable: "vLLM V1 exports vllm:prompt_tokens_cached_by_source_total by 0.32.0; the host, p2p and disk tiers count only with KV offloading " +
			"(--kv-offloading-size <GiB> --kv-offloading-backend native, or a KV connector with --kv-transfer-config)",
		Without: "cached prompt tokens per second by tier (device, host, p2p, disk, external_unspecified) are not shown",
		Idle:    "they served no prompt from a cache"},
	{Signal: "offload_*", Keys: []SignalKey{OffloadStoreBytes, OffloadLoadBytes, OffloadAllocFailures},
		Enable: "vLLM V1 exports the KV-offload counters by 0.32.0 only with its native KV offloading " +
			"(--kv-offloading-size <GiB> --kv-offloading-backend native, or --kv-transfer-config naming OffloadingConnector)",
		Without: "the offload tier's load and store bytes per second, time share and allocation failures are not shown",
		Idle:    "KV offloading is not configured on them, or moved no block"},
}

// Present reports whether detection saw any signal of the family.
func (fam PrefixFamily) Present(d Detection) bool {
	for _, k := range fam.Keys {
		if d.HasSignal(k) {
			return true
		}
	}
	return false
}

// names lists the family's wire names under prefix, for notices.
func (fam PrefixFamily) names(prefix string) string {
	var out []string
	for _, k := range fam.Keys {
		if s, ok := Lookup(k); ok {
			out = append(out, s.WireNames(prefix)...)
		}
	}
	return strings.Join(out, " or ")
}

// PrefixMissingText is the notice for a fleet that exports no series of
// the family: which metric, and which vLLM version and setting export it.
func PrefixMissingText(fam PrefixFamily, prefix string) string {
	return fmt.Sprintf("This fleet exports no %s, so %s. %s.", fam.names(prefix), fam.Without, strings.ReplaceAll(fam.Enable, "vllm:", prefix))
}

// PrefixIdleText is the notice for a family the fleet exports that gave
// the selected engines no point in the range (nothing was looked up).
func PrefixIdleText(fam PrefixFamily, prefix, window string) string {
	return fmt.Sprintf("The selected engines export %s, but looked nothing up in this time range and the rate window (%s) before it: %s; %s.",
		fam.names(prefix), window, fam.Idle, fam.Without)
}

// PrefixV0Text says how V0's gauge differs from V1's counters, for a fleet
// whose hit rate comes from it in some groups.
func PrefixV0Text(prefix string) string {
	return fmt.Sprintf("The hit rate of V0 engines (of groups without V1 prefix-cache counters) is V0's own %sgpu_prefix_cache_hit_rate, averaged over the group's engines: "+
		"vLLM computes it over the blocks looked up since each engine started, not over the rate window, so it moves slowly.", prefix)
}
