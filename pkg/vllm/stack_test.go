package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestClassifyStackKServe: KServe's LLMInferenceService is recognised by
// the names its monitors rename (kserve_vllm:…) or by its target label,
// and every other stack keeps its own answer.
func TestClassifyStackKServe(t *testing.T) {
	pod := model.Metric{"namespace": "ml", "pod": "llama-kserve-0", "model_name": "m"}
	with := func(k, v string) model.Metric {
		m := pod.Clone()
		m[model.LabelName(k)] = model.LabelValue(v)
		return m
	}
	tests := []struct {
		name    string
		names   []string
		shapes  []model.Metric
		profile string
	}{
		{"renamed names", []string{"kserve_vllm:num_requests_running", "kserve_inference_pool_ready_pods"}, nil, models.ProfileKServe},
		{"llm_isvc_name label", []string{"vllm:num_requests_running"}, []model.Metric{with("llm_isvc_name", "llama")}, models.ProfileKServe},
		{"renamed picker alone is KServe's, not llm-d's", []string{"vllm:num_requests_running", "kserve_inference_pool_ready_pods"},
			[]model.Metric{with("llm_isvc_name", "llama")}, models.ProfileKServe},
		{"plain llm-d picker", []string{"vllm:num_requests_running", "inference_pool_ready_pods"}, []model.Metric{pod}, models.ProfileLLMD},
		{"plain instances", []string{"vllm:num_requests_running"}, []model.Metric{{"instance": "a:8000"}}, models.ProfilePrometheus},
		{"bare pods", []string{"vllm:num_requests_running"}, []model.Metric{pod}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vec model.Vector
			for _, m := range tt.shapes {
				vec = append(vec, &model.Sample{Metric: m})
			}
			require.Equal(t, tt.profile, ClassifyStack(tt.names, vec).Profile)
		})
	}
}

// The stack lookups parse, stay inside the scope, and see KServe's names.
func TestStackLookups(t *testing.T) {
	b := Builder{Scope: mustMatchers(t, `namespace="ml"`)}
	for _, expr := range []string{b.StackNamesSelector(), b.StackShapesExpr()} {
		for _, vs := range allSelectors(t, expr) {
			requireHas(t, vs.LabelMatchers, b.Scope[0], expr)
		}
	}
	sel := allSelectors(t, b.StackNamesSelector())[0].LabelMatchers
	for _, name := range []string{"kserve_vllm:num_requests_running", "vllm:kv_cache_usage_perc", "ray_vllm_num_requests_running",
		"kserve_inference_pool_ready_pods", "llm_d_epp_ready_endpoints"} {
		require.True(t, nameMatches(sel, name), name)
	}
	require.False(t, nameMatches(sel, "kserve_up"))
	require.Contains(t, b.StackShapesExpr(), "llm_isvc_name")
}

func nameMatches(ms []*labels.Matcher, name string) bool {
	for _, m := range ms {
		if m.Name == model.MetricNameLabel {
			return m.Matches(name)
		}
	}
	return false
}

// Under KServe the picker's gauges are read under both names: renamed by
// KServe's scheduler ServiceMonitor and the picker's own.
func TestGatewaySignalsKServe(t *testing.T) {
	s, err := models.Settings{}.WithProfile(models.ProfileKServe, "")
	require.NoError(t, err)
	b := ForSettings(s)
	var all []string
	for _, s := range b.GatewaySignals(models.GroupInstance) {
		for _, vs := range allSelectors(t, s.Expr) {
			all = append(all, vs.Name)
		}
	}
	joined := strings.Join(all, " ")
	for _, n := range []string{"kserve_inference_pool_average_queue_size", "inference_pool_average_queue_size",
		"kserve_llm_d_epp_per_endpoint_queue_size", "llm_d_epp_per_endpoint_queue_size", "kserve_inference_pool_ready_pods"} {
		require.Contains(t, all, n, joined)
	}
	require.NotContains(t, strings.Join(func() []string {
		var out []string
		for _, s := range profileBuilder(models.ProfileLLMD).GatewaySignals(models.GroupInstance) {
			out = append(out, s.Expr)
		}
		return out
	}(), " "), "kserve_", "llm-d reads the picker's own names only")
}

// Under profiles with several prefixes (KServe, Ray Serve) the fleet's
// expressions union each name and still parse: a range takes no union.
func TestFleetSignalsParseUnderEveryProfile(t *testing.T) {
	for _, name := range models.ProfileNames() {
		s, err := models.Settings{}.WithProfile(name, "")
		require.NoError(t, err)
		for _, sig := range ForSettings(s).FleetSignals(models.Filters{}, "1m", "1h") {
			t.Run(name+"/"+sig.Name, func(t *testing.T) {
				require.NotEmpty(t, allSelectors(t, sig.Expr))
			})
		}
	}
}
