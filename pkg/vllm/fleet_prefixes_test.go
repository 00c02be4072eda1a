package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// markerNameMatcher parses the fleet table's marker selector with
// Prometheus's parser and returns its __name__ matcher.
func markerNameMatcher(t *testing.T, b Builder) *labels.Matcher {
	t.Helper()
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(b.markerSelector(models.Filters{}))
	require.NoError(t, err)
	for _, m := range expr.(*parser.VectorSelector).LabelMatchers {
		if m.Name == labels.MetricName {
			return m
		}
	}
	t.Fatal("no __name__ matcher")
	return nil
}

// TestMarkerGenerationEveryPrefix: under a profile with several prefixes
// the fleet table's marker selector matches the markers under each of
// them, and MarkerGeneration reads each back to its generation; names of
// another prefix (another stack's) stay out.
func TestMarkerGenerationEveryPrefix(t *testing.T) {
	v1, v0 := v1Markers[0], v0Markers[0]
	cases := []struct {
		name, profile string
		series        string
		want          Generation
	}{
		{"prometheus plain V1", models.ProfilePrometheus, "vllm:" + markerSeries(v1), GenV1},
		{"kserve renamed V1", models.ProfileKServe, "kserve_vllm:" + markerSeries(v1), GenV1},
		{"kserve renamed V0", models.ProfileKServe, "kserve_vllm:" + markerSeries(v0), GenV0},
		{"kserve plain V1", models.ProfileKServe, "vllm:" + markerSeries(v1), GenV1},
		{"kserve plain V0", models.ProfileKServe, "vllm:" + markerSeries(v0), GenV0},
		{"ray colon V1", models.ProfileRayServe, "ray_vllm:" + markerSeries(v1), GenV1},
		{"ray colon V0", models.ProfileRayServe, "ray_vllm:" + markerSeries(v0), GenV0},
		{"ray underscore V1", models.ProfileRayServe, "ray_vllm_" + markerSeries(v1), GenV1},
		{"ray underscore V0", models.ProfileRayServe, "ray_vllm_" + markerSeries(v0), GenV0},
		{"prometheus ignores kserve names", models.ProfilePrometheus, "kserve_vllm:" + markerSeries(v1), GenUnknown},
		{"ray ignores plain names", models.ProfileRayServe, "vllm:" + markerSeries(v1), GenUnknown},
		{"kserve ignores ray names", models.ProfileKServe, "ray_vllm_" + markerSeries(v0), GenUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := profileBuilder(tc.profile)
			require.Equal(t, tc.want != GenUnknown, markerNameMatcher(t, b).Matches(tc.series), "selector match of %s", tc.series)
			require.Equal(t, tc.want, markerGenerationAny(tc.series, b.PrefixList()))
		})
	}
}

// TestMarkerSelectorMixedPrefixFleet: one selector matches a fleet whose
// engines carry different prefixes of the profile, each read to its own
// generation.
func TestMarkerSelectorMixedPrefixFleet(t *testing.T) {
	b := profileBuilder(models.ProfileKServe)
	m := markerNameMatcher(t, b)
	fleet := map[string]Generation{
		"kserve_vllm:" + markerSeries(v1Markers[0]): GenV1,
		"vllm:" + markerSeries(v0Markers[0]):        GenV0,
		"vllm:" + markerSeries(v1Markers[0]):        GenV1,
		"kserve_vllm:" + markerSeries(v0Markers[0]): GenV0,
	}
	for name, want := range fleet {
		require.True(t, m.Matches(name), name)
		require.Equal(t, want, markerGenerationAny(name, b.PrefixList()), name)
	}
}

// TestMarkerSelectorSinglePrefixUnchanged: the default profile's selector
// keeps its single-prefix form byte for byte.
func TestMarkerSelectorSinglePrefixUnchanged(t *testing.T) {
	for _, b := range []Builder{{Prefix: "vllm:"}, profileBuilder(models.ProfilePrometheus)} {
		got := b.markerSelector(models.Filters{})
		require.Regexp(t, `^\{__name__=~"vllm:\(`, got)
	}
}

// markerGenerationAny calls MarkerGeneration with every prefix.
func markerGenerationAny(name string, prefixes []string) Generation {
	return MarkerGeneration(name, prefixes...)
}
