package vllm

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// offloadBuilder is a builder whose detection saw the given names besides
// the running gauge.
func offloadBuilder(names ...string) Builder {
	full := []string{"vllm:num_requests_running"}
	for _, n := range names {
		full = append(full, "vllm:"+n)
	}
	return Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: Detect(full, "vllm:")}
}

// offloadSignalsOf keeps the KV-offload series of the prefixCache query.
func offloadSignalsOf(b Builder, g models.Grouping) map[string]string {
	out := map[string]string{}
	for _, s := range b.PrefixCacheSignals(g, models.Filters{}, "1m0s") {
		if strings.HasPrefix(s.Name, CachedTokensSignalPrefix) || strings.HasPrefix(s.Name, "offload_") {
			out[s.Name] = s.Expr
		}
	}
	return out
}

// TestOffloadSignalsPromQL pins the exact text of each KV-offload series:
// cached tokens per tier one source matcher each; bytes and failures
// summed, the time shares averaged over the group's engines; load, load
// time and failures 0 (not absent) where the group stores, since vLLM
// creates their series at the first load or failure.
func TestOffloadSignalsPromQL(t *testing.T) {
	b := offloadBuilder("prompt_tokens_cached_by_source_total", "kv_offload_store_bytes_total", "kv_offload_load_bytes_total")
	zero := " or 0 * sum by (model_name) (rate(vllm:kv_offload_store_bytes_total[1m0s]))"
	want := map[string]string{
		"cached_tokens_device":               `sum by (model_name) (rate(vllm:prompt_tokens_cached_by_source_total{source="device"}[1m0s]))`,
		"cached_tokens_host":                 `sum by (model_name) (rate(vllm:prompt_tokens_cached_by_source_total{source="host"}[1m0s]))`,
		"cached_tokens_p2p":                  `sum by (model_name) (rate(vllm:prompt_tokens_cached_by_source_total{source="p2p"}[1m0s]))`,
		"cached_tokens_disk":                 `sum by (model_name) (rate(vllm:prompt_tokens_cached_by_source_total{source="disk"}[1m0s]))`,
		"cached_tokens_external_unspecified": `sum by (model_name) (rate(vllm:prompt_tokens_cached_by_source_total{source="external_unspecified"}[1m0s]))`,
		"offload_load_bytes":                 `sum by (model_name) (rate(vllm:kv_offload_load_bytes_total[1m0s]))` + zero,
		"offload_store_bytes":                `sum by (model_name) (rate(vllm:kv_offload_store_bytes_total[1m0s]))`,
		"offload_load_time_share":            `avg by (model_name) (rate(vllm:kv_offload_load_time_total[1m0s]))` + zero,
		"offload_store_time_share":           `avg by (model_name) (rate(vllm:kv_offload_store_time_total[1m0s]))`,
		"offload_allocation_failures":        `sum by (model_name) (rate(vllm:kv_offload_allocation_failure_total[1m0s]))` + zero,
	}
	got := offloadSignalsOf(b, models.GroupModel)
	require.Equal(t, want, got)
	for name, e := range got {
		require.NotEmpty(t, allSelectors(t, e), name)
	}
	require.Equal(t, `sum(rate(vllm:kv_offload_store_bytes_total[1m0s]))`, offloadSignalsOf(b, models.GroupNone)["offload_store_bytes"])
}

// TestOffloadSignalsOnlyWhereExported: the cached-by-source and offload
// series are asked for only where detection saw their names (or saw
// nothing), each family on its own; without the store counter the `or 0`
// fallback is left out rather than pointing at a name the fleet lacks.
func TestOffloadSignalsOnlyWhereExported(t *testing.T) {
	cached := []string{"cached_tokens_device", "cached_tokens_disk", "cached_tokens_external_unspecified", "cached_tokens_host", "cached_tokens_p2p"}
	offload := []string{"offload_allocation_failures", "offload_load_bytes", "offload_load_time_share", "offload_store_bytes", "offload_store_time_share"}
	tests := []struct {
		name string
		b    Builder
		want []string
	}{
		{"undetected", Builder{Prefix: "vllm:", InstanceLabel: "instance"}, append(append([]string(nil), cached...), offload...)},
		{"current simulator without offloading", offloadBuilder("prefix_cache_hits_total", "prefix_cache_queries_total", "prompt_tokens_by_source_total"), nil},
		{"cached by source only", offloadBuilder("prompt_tokens_cached_by_source_total"), cached},
		{"offload stores only", offloadBuilder("kv_offload_store_bytes_total"), offload},
		{"failures only", offloadBuilder("kv_offload_allocation_failure_total"), offload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := offloadSignalsOf(tt.b, models.GroupInstance)
			var names []string
			for n := range got {
				names = append(names, n)
			}
			require.ElementsMatch(t, tt.want, names)
		})
	}
	fail := offloadSignalsOf(offloadBuilder("kv_offload_allocation_failure_total"), models.GroupInstance)["offload_allocation_failures"]
	require.Equal(t, `sum by (instance) (rate(vllm:kv_offload_allocation_failure_total[1m0s]))`, fail)
}

// TestOffloadNoticeTexts: the notices for a fleet without the families
// name each metric under the data source's prefix and vLLM's setting.
func TestOffloadNoticeTexts(t *testing.T) {
	byFam := map[string]PrefixFamily{}
	for _, f := range PrefixFamilies {
		byFam[f.Signal] = f
	}
	cached, offload := byFam[CachedTokensSignalPrefix+"*"], byFam["offload_*"]
	miss := PrefixMissingText(cached, "ray_vllm:")
	require.Contains(t, miss, "This fleet exports no ray_vllm:prompt_tokens_cached_by_source_total,")
	require.Contains(t, miss, "--kv-offloading-size")
	require.NotContains(t, miss, " vllm:")
	miss = PrefixMissingText(offload, "vllm:")
	for _, want := range []string{"vllm:kv_offload_store_bytes_total", "vllm:kv_offload_load_bytes_total", "vllm:kv_offload_allocation_failure_total",
		"--kv-offloading-size <GiB> --kv-offloading-backend native", "OffloadingConnector", "allocation failures are not shown"} {
		require.Contains(t, miss, want)
	}
	require.Contains(t, PrefixIdleText(offload, "vllm:", "1m"), "KV offloading is not configured on them")
}

// TestOffloadAlertReadsTheSameCounters: the shipped
// VLLMKVOffloadAllocationFailures alert reads the failure counter the
// prefixCache query does, and the store counter its description quotes.
func TestOffloadAlertReadsTheSameCounters(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/prometheus/rules/vllm.rules.yml")
	require.NoError(t, err)
	rules := string(raw)
	i := strings.Index(rules, "- alert: VLLMKVOffloadAllocationFailures")
	require.GreaterOrEqual(t, i, 0, "the alert ships")
	alert := rules[i:]
	if j := strings.Index(alert[1:], "- alert:"); j > 0 {
		alert = alert[:j+1]
	}
	for _, key := range []SignalKey{OffloadAllocFailures, OffloadStoreBytes} {
		s, _ := Lookup(key)
		require.Contains(t, alert, s.WireNames("vllm:")[0]+"{", "%s", key)
	}
}
