package vllm

import (
	"encoding/csv"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestLatencyBucketsMatchReference: the bounds the slo query snaps to are
// the newest list of every wire name of each family in the reference table.
func TestLatencyBucketsMatchReference(t *testing.T) {
	f, err := os.Open("testdata/reference/vllm-metrics.tsv")
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	buckets := map[string]string{}
	for _, row := range rows[1:] {
		buckets[strings.TrimPrefix(row[0], "vllm:")] = row[5]
	}
	lists := regexp.MustCompile(`\[[0-9.,]+\]`)
	for family, key := range SLOFamilies {
		s, _ := Lookup(key)
		for _, name := range []string{s.V1, s.V0} {
			t.Run(family+"/"+name, func(t *testing.T) {
				all := lists.FindAllString(buckets[name], -1)
				require.NotEmpty(t, all, "no bucket list for %s", name)
				var want []float64
				for _, v := range strings.Split(strings.Trim(all[len(all)-1], "[]"), ",") {
					f, err := strconv.ParseFloat(v, 64)
					require.NoError(t, err)
					want = append(want, f)
				}
				require.Equal(t, want, LatencyBuckets[key])
			})
		}
	}
}

func TestSnapBound(t *testing.T) {
	tests := []struct {
		name      string
		key       SignalKey
		threshold float64
		want      float64
		snapped   bool
	}{
		{"on a bound", TTFT, 0.5, 0.5, false},
		{"nearest above", TTFT, 0.7, 0.75, true},
		{"tie goes to the stricter bound", ITL, 0.0625, 0.05, true},
		{"below the first bound", QueueTime, 0.01, 0.3, true},
		{"above the last bound", E2E, 1e5, 7680, true},
		{"integer bound", E2E, 10, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, snapped := SnapBound(tt.key, tt.threshold)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.snapped, snapped)
		})
	}
}

// TestLeForms: both spellings of an integer bound, since Prometheus 3
// rewrites le="1" as le="1.0" and Prometheus 2 keeps what it scraped.
func TestLeForms(t *testing.T) {
	require.Equal(t, []string{"1", "1.0"}, LeForms(1))
	require.Equal(t, []string{"2560", "2560.0"}, LeForms(2560))
	require.Equal(t, []string{"0.001"}, LeForms(0.001))
	require.Equal(t, `le=~"1|1\\.0"`, leMatcher(1).String())
	for _, bounds := range LatencyBuckets {
		for _, b := range bounds {
			m := leMatcher(b)
			py := strconv.FormatFloat(b, 'f', -1, 64)
			if !strings.Contains(py, ".") {
				py += ".0" // Python's repr, as vLLM writes it
			}
			require.True(t, m.Matches(py), "%v must match %q", m, py)
			require.False(t, m.Matches(py+"1"), "%v must not match %q", m, py+"1")
		}
	}
}

func TestSLOSignalsParse(t *testing.T) {
	for _, g := range []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine} {
		b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
		sigs := b.SLOSignals(Objective{Key: ITL, Bound: 1, Target: 0.999, Window: "28d"}, g, models.Filters{Models: []string{`a"b`}})
		require.Len(t, sigs, 2+len(BurnPairs))
		for _, s := range sigs {
			_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
			require.NoError(t, err, "%s: %s", s.Name, s.Expr)
			require.Contains(t, s.Expr, `le=~"1|1\\.0"`)
			require.Contains(t, s.Expr, "time_per_output_token_seconds_bucket", "V0's name is unioned")
		}
		require.Contains(t, sigs[1].Expr, ") / 0.001", "error budget is 1 - target")
		require.Contains(t, sigs[2].Expr, "[1h]")
		require.Contains(t, sigs[2].Expr, "[5m]")
	}
}

// TestSLOSignalNames: the names the query model accepts are the names the
// builder writes, in the same order.
func TestSLOSignalNames(t *testing.T) {
	var names []string
	for _, s := range (Builder{Prefix: "vllm:", InstanceLabel: "instance"}).SLOSignals(Objective{Key: TTFT, Bound: 1, Target: 0.99, Window: "28d"}, models.GroupModel, models.Filters{}) {
		names = append(names, s.Name)
	}
	require.Equal(t, models.SLOSignals, names)
}
