package vllm

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refRow is one row of the vLLM metric reference table in testdata.
type refRow struct {
	exposed, kind, unit, engine string
}

// loadReference indexes the reference table by the base wire name (without
// the vllm: prefix and histogram suffixes).
func loadReference(t *testing.T) map[string]refRow {
	t.Helper()
	f, err := os.Open("testdata/reference/vllm-metrics.tsv")
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	out := map[string]refRow{}
	for _, row := range rows[1:] {
		exposed := row[1]
		base := strings.TrimPrefix(strings.TrimSuffix(exposed, "_{bucket,sum,count}"), "vllm:")
		out[base] = refRow{exposed: exposed, kind: row[2], unit: row[4], engine: row[6]}
	}
	return out
}

func TestCatalogueMatchesReference(t *testing.T) {
	ref := loadReference(t)
	units := map[Unit][]string{UnitSeconds: {"seconds"}, UnitPercent: {"ratio"}, UnitRequests: {"requests"}}
	for _, s := range Signals() {
		for gen, name := range map[string]string{"V1": s.V1, "V1 (older name)": s.V1Old, "V0": s.V0} {
			if name == "" {
				continue
			}
			t.Run(string(s.Key)+"/"+gen, func(t *testing.T) {
				row, ok := ref[name]
				require.True(t, ok, "vllm:%s is not in the reference table", name)
				wantKind := string(s.Kind)
				if s.Kind == Info {
					wantKind = "gauge"
				}
				require.True(t, strings.HasPrefix(row.kind, wantKind), "type %q, reference says %q", wantKind, row.kind)
				require.True(t, row.engine == "both" || strings.HasPrefix(row.engine, gen[:2]), "%s name in a %s-only row", gen, row.engine)
				for _, u := range units[s.Unit] {
					require.True(t, strings.HasPrefix(row.unit, u), "unit %s, reference says %q", s.Unit, row.unit)
				}
			})
		}
	}
}

func TestMarkersAreExclusive(t *testing.T) {
	ref := loadReference(t)
	for gen, markers := range map[string][]string{"V1": v1Markers, "V0": v0Markers} {
		for _, m := range markers {
			t.Run(gen+"/"+m, func(t *testing.T) {
				row, ok := ref[m]
				require.True(t, ok, "marker %s is not in the reference table", m)
				require.True(t, strings.HasPrefix(row.engine, gen), "marker %s is %q, not %s-only", m, row.engine, gen)
			})
		}
	}
}

func TestWireNames(t *testing.T) {
	tests := []struct {
		key    SignalKey
		prefix string
		want   []string
		v0     string
	}{
		{Running, "vllm:", []string{"vllm:num_requests_running"}, "vllm:num_requests_running"},
		{KVUsage, "vllm:", []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, "vllm:gpu_cache_usage_perc"},
		{ITL, "ray_vllm:", []string{"ray_vllm:inter_token_latency_seconds", "ray_vllm:time_per_output_token_seconds"}, "ray_vllm:time_per_output_token_seconds"},
		{WaitingByReason, "vllm:", []string{"vllm:num_requests_waiting_by_reason"}, ""},
		{Swapped, "vllm:", []string{"vllm:num_requests_swapped"}, "vllm:num_requests_swapped"},
		{PrefixHits, "vllm:", []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.key), func(t *testing.T) {
			s, ok := Lookup(tt.key)
			require.True(t, ok)
			require.Equal(t, tt.want, s.WireNames(tt.prefix))
			require.Equal(t, tt.v0, s.Name(GenV0, tt.prefix))
		})
	}
	_, ok := Lookup("nope")
	require.False(t, ok)
}
