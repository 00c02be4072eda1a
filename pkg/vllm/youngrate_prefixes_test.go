package vllm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// With several prefixes the young-series correction is applied to each
// name and the parts are unioned, none dropped.
func TestYoungRateUnionSeveralPrefixes(t *testing.T) {
	b := Builder{Prefixes: []string{"vllm:", "kserve_vllm:"}, InstanceLabel: "instance", Resolution: "15s"}
	expr := b.youngRateUnion(Preemptions, models.Filters{}, "", "1m")
	require.True(t, strings.HasPrefix(expr, "((rate(vllm:num_preemptions_total[1m]) * (60 / "), expr)
	require.Contains(t, expr, ") or on (instance) (rate(kserve_vllm:num_preemptions_total[1m]) * (60 / ")
	require.Equal(t, 2, strings.Count(expr, "timestamp("), expr)
}
