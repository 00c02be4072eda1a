package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// The smoothed length buckets scale by the step in exact seconds, and the
// per-step increase is one selector for one prefix, a union for several.
func TestHistogramBucketsStepAndUnion(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	expr := b.HistogramBuckets(RequestPromptTokens, models.GroupNone, models.Filters{}, "1m", 1234*time.Millisecond, false)
	require.True(t, strings.HasSuffix(expr, " * 1.234"), expr)

	one := b.HistogramBuckets(RequestPromptTokens, models.GroupNone, models.Filters{}, "1m", time.Minute, true)
	require.Equal(t, "sum by (le) (increase(vllm:request_prompt_tokens_bucket[1m]))", one)

	b.Prefixes = []string{"vllm:", "kserve_vllm:"}
	two := b.HistogramBuckets(RequestPromptTokens, models.GroupNone, models.Filters{}, "1m", time.Minute, true)
	require.Equal(t, "sum by (le) ((increase(vllm:request_prompt_tokens_bucket[1m]) or on (instance) increase(kserve_vllm:request_prompt_tokens_bucket[1m])))", two)
}

// Without a model filter the gateway's error share matches no model_name.
func TestGatewayErrorShareNoModelFilter(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Gateway: true}
	expr := b.GatewayErrorShare(models.GroupNone, models.Filters{}, "2m")
	require.NotEmpty(t, expr)
	require.NotContains(t, expr, "model_name")
}
