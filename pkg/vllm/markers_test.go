package vllm

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// referenceRows maps each exposed base name of the reference table (without
// vllm: and the histogram series suffixes) to its type and engine columns.
func referenceRows(t *testing.T) map[string][2]string {
	t.Helper()
	f, err := os.Open("testdata/reference/vllm-metrics.tsv")
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	out := map[string][2]string{}
	for _, row := range rows[1:] {
		base := strings.TrimPrefix(strings.TrimSuffix(row[1], "_{bucket,sum,count}"), "vllm:")
		out[base] = [2]string{row[2], row[6]}
	}
	return out
}

// TestMarkersMatchExposedSeries: every generation marker is a name of its
// generation in the reference table (the 0.7.3–0.11 gpu_prefix_cache_*
// counters are V1), and the fleet table's marker selector matches a series
// Prometheus really stores for it: a histogram has only _bucket, _sum and
// _count series, never its base name. MarkerGeneration reads the matched
// series back to the marker's generation.
func TestMarkersMatchExposedSeries(t *testing.T) {
	ref := referenceRows(t)
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(Builder{Prefix: "vllm:"}.markerSelector(models.Filters{}))
	require.NoError(t, err)
	var nameMatcher *labels.Matcher
	for _, m := range expr.(*parser.VectorSelector).LabelMatchers {
		if m.Name == labels.MetricName {
			nameMatcher = m
		}
	}
	require.NotNil(t, nameMatcher)
	for gen, markers := range map[Generation][]string{GenV1: v1Markers, GenV0: v0Markers} {
		for _, m := range markers {
			t.Run(string(gen)+"/"+m, func(t *testing.T) {
				row, ok := ref[m]
				require.True(t, ok, "%s is not in the reference table", m)
				require.True(t, strings.HasPrefix(row[1], string(gen)), "%s is %s in the reference table", m, row[1])
				exposed := []string{"vllm:" + m}
				if strings.HasPrefix(row[0], "histogram") {
					exposed = []string{"vllm:" + m + "_bucket", "vllm:" + m + "_sum", "vllm:" + m + "_count"}
				}
				matched := false
				for _, name := range exposed {
					if nameMatcher.Matches(name) {
						matched = true
						require.Equal(t, gen, MarkerGeneration(name, "vllm:"), name)
					}
				}
				require.True(t, matched, "the marker selector matches none of %v", exposed)
			})
		}
	}
}
