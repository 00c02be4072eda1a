package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestGatewaySignalsUnionBothNameSets: each picker signal reads the legacy
// inference_pool_* gauge and the current llm_d_epp_* one, so a picker of
// either age (or one that emits both) is seen; a gateway prefix
// (KServe renames them) may add more names, never fewer.
func TestGatewaySignalsUnionBothNameSets(t *testing.T) {
	want := map[string][]string{
		GatewayPoolQueue:     {"inference_pool_average_queue_size", "llm_d_epp_average_queue_size"},
		GatewayPoolKV:        {"inference_pool_average_kv_cache_utilization", "llm_d_epp_average_kv_cache_utilization"},
		GatewayReady:         {"inference_pool_ready_pods", "llm_d_epp_ready_endpoints"},
		GatewayEndpointQueue: {"inference_pool_per_pod_queue_size", "llm_d_epp_per_endpoint_queue_size"},
	}
	sigs := profileBuilder(models.ProfileLLMD).GatewaySignals(models.GroupInstance)
	require.Len(t, sigs, len(want))
	for _, s := range sigs {
		t.Run(s.Name, func(t *testing.T) {
			var got []string
			for _, vs := range allSelectors(t, s.Expr) {
				got = append(got, vs.Name)
			}
			require.Subset(t, got, want[s.Name], s.Expr)
		})
	}
}
