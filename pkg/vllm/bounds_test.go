package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestParseBounds: le values as Prometheus 2 and 3 store them, merged by
// number, +Inf and junk dropped, ascending.
func TestParseBounds(t *testing.T) {
	tests := []struct {
		name      string
		les       []string
		want      []float64
		spellings map[float64][]string
	}{
		{"Prometheus 3 float form", []string{"+Inf", "2.0", "0.5", "1.0"}, []float64{0.5, 1, 2},
			map[float64][]string{1: {"1.0"}, 2: {"2.0"}, 0.5: {"0.5"}}},
		{"both spellings across an upgrade", []string{"1", "1.0", "0.25", "+Inf"}, []float64{0.25, 1},
			map[float64][]string{1: {"1", "1.0"}, 0.25: {"0.25"}}},
		{"junk and exponent", []string{"x", "1e-05", "NaN"}, []float64{1e-05},
			map[float64][]string{1e-05: {"1e-05"}}},
		{"nothing", nil, nil, map[float64][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseBounds(tt.les)
			require.Equal(t, tt.want, got.Values)
			require.Equal(t, tt.spellings, got.Spellings)
			require.False(t, got.Default)
			require.Equal(t, len(tt.want) == 0, got.Empty())
		})
	}
}

// TestBoundsSnap: a threshold snaps to the store's bounds, not vLLM's
// defaults, and the le matcher accepts every spelling seen.
func TestBoundsSnap(t *testing.T) {
	custom := ParseBounds([]string{"0.2", "0.7", "3.0", "3", "+Inf"})
	tests := []struct {
		name      string
		bs        Bounds
		threshold float64
		want      float64
		snapped   bool
	}{
		{"a replaced bound the defaults lack", custom, 0.7, 0.7, false},
		{"nearest replaced bound", custom, 0.5, 0.7, true},
		{"tie goes to the stricter bound", ParseBounds([]string{"1", "2"}), 1.5, 1, true},
		{"above the last bound", custom, 100, 3, true},
		{"defaults", DefaultBounds(TTFT), 0.7, 0.75, true},
		{"no bound at all keeps the threshold", ParseBounds([]string{"+Inf", "x"}), 0.7, 0.7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, snapped := tt.bs.Snap(tt.threshold)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.snapped, snapped)
		})
	}
	require.Equal(t, "0.2, 0.7, 3", custom.Text())
	require.Equal(t, []string{"3", "3.0"}, custom.Le(3))
	require.Equal(t, []string{"0.00001", "1e-05"}, ParseBounds([]string{"1e-05"}).Le(1e-05), "the store's own spelling too")
	require.Equal(t, 0.2, custom.Lowest())
	require.True(t, DefaultBounds(QueueTime).Default)
}

// TestBucketSelector: the match[] of the le lookup is a valid selector of
// every wire name's _bucket series under the filters and scope.
func TestBucketSelector(t *testing.T) {
	b := Builder{Prefix: "vllm:", Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "eu")}}
	got := b.BucketSelector(ITL, models.Filters{Models: []string{"m"}})
	require.Equal(t, `{__name__=~"vllm:inter_token_latency_seconds_bucket|vllm:time_per_output_token_seconds_bucket", cluster="eu", model_name="m"}`, got)
	_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
	require.NoError(t, err)
}

// TestObjectiveLe: the attainment's le matcher takes the spellings the
// store holds when given, both canonical forms otherwise.
func TestObjectiveLe(t *testing.T) {
	require.Equal(t, `le=~"1|1\\.0"`, Objective{Bound: 1}.leMatcher().String())
	require.Equal(t, `le=~"1e-05|0\\.00001"`, Objective{Bound: 1e-05, Le: []string{"1e-05", "0.00001"}}.leMatcher().String())
}

// TestBoundCoverage: the engines carrying a bound are counted against the
// engines exporting the histogram, each as a valid expression.
func TestBoundCoverage(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	carriers, total := b.BoundCoverage(TTFT, models.Filters{Models: []string{"m"}}, []string{"3", "3.0"})
	require.Equal(t, `count(group by (instance, engine, model_name) ({__name__=~"vllm:time_to_first_token_seconds_bucket", model_name="m", le=~"3|3\\.0"}))`, carriers)
	require.Equal(t, `count(group by (instance, engine, model_name) ({__name__=~"vllm:time_to_first_token_seconds_count", model_name="m"}))`, total)
	for _, e := range []string{carriers, total} {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
		require.NoError(t, err)
	}
}
