package vllm

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// A signal is present when only its older V1 name is.
func TestHasSignalByOlderV1Name(t *testing.T) {
	d := Detection{Names: map[string]bool{"gpu_prefix_cache_hits_total": true}}
	require.True(t, d.HasSignal(PrefixHits))
	require.False(t, Detection{Names: map[string]bool{"": true}}.HasSignal(PrefixHits))
}

// A name under the prefix that is no marker belongs to no generation.
func TestMarkerGenerationOfOtherNames(t *testing.T) {
	require.Equal(t, GenUnknown, MarkerGeneration("vllm:num_requests_running", "vllm:"))
	require.Equal(t, GenV0, MarkerGeneration("vllm:cpu_cache_usage_perc", "vllm:"))
	require.Equal(t, GenV1, MarkerGeneration("vllm:kv_cache_usage_perc", "vllm:"))
}

// prefixesRegex puts a longer prefix before one it begins with (so the
// shorter never shadows it) and keeps the given order of equally long ones.
func TestPrefixesRegexOrder(t *testing.T) {
	require.Equal(t, `(?:kserve_vllm:|vllm:)`, prefixesRegex([]string{"vllm:", "kserve_vllm:"}))
	require.Equal(t, `(?:a_vllm:|b_vllm:)`, prefixesRegex([]string{"a_vllm:", "b_vllm:"}))
	require.Equal(t, `(?:b_vllm:|a_vllm:)`, prefixesRegex([]string{"b_vllm:", "a_vllm:"}))
}

// A series with a server label is production-stack's router only when it
// has no model_name; an engine's series with both is not.
func TestRouterSeriesNeedNoModelName(t *testing.T) {
	engine := model.Vector{{Metric: model.Metric{"server": "s", "model_name": "m"}}}
	require.NotEqual(t, models.ProfileProductionStack, ClassifyStack([]string{"vllm:num_requests_running"}, engine).Profile)
	router := model.Vector{{Metric: model.Metric{"server": "s"}}}
	require.Equal(t, models.ProfileProductionStack, ClassifyStack([]string{"vllm:num_requests_running"}, router).Profile)
}
