package query_test

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// kvBoundAnswer is a Prometheus in which instance "a" is KV-bound at every
// step (KV cache at 97%, 0.5 preemptions/s), with the given prefix-cache
// hit rate now and over the window before.
func kvBoundAnswer(now, before float64) func(expr string, r v1.Range) model.Matrix {
	return func(expr string, r v1.Range) model.Matrix {
		v := -1.0
		switch {
		case strings.Contains(expr, "min_over_time("): // the stall expression: not stalled
		case strings.Contains(expr, "prefix_cache_hits_total") && strings.Contains(expr, " offset "):
			v = before
		case strings.Contains(expr, "prefix_cache_hits_total"):
			v = now
		case strings.Contains(expr, "num_preemptions_total"):
			v = 0.5
		case strings.Contains(expr, "kv_cache_usage_perc"):
			v = 0.97
		case strings.Contains(expr, "avg_over_time(vllm:num_requests_running"), strings.Contains(expr, "max_over_time(vllm:num_requests_running"):
			v = 8
		}
		if v < 0 {
			return model.Matrix{}
		}
		ss := &model.SampleStream{Metric: model.Metric{"instance": "a"}}
		for ts := r.Start; !ts.After(r.End); ts = ts.Add(r.Step) {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(ts.UnixNano()), Value: model.SampleValue(v)})
		}
		return model.Matrix{ss}
	}
}

// TestSaturationEvidenceNamesPrefixCollapse: the saturation query reads
// the hit rate now and one window before, and a KV-bound verdict whose
// hit rate collapsed says so in its reason; the verdict stays the same.
func TestSaturationEvidenceNamesPrefixCollapse(t *testing.T) {
	tests := []struct {
		name        string
		now, before float64
		collapse    bool
	}{
		{"collapsed from 60% to 10%", 0.1, 0.6, true},
		{"steady at 60%", 0.6, 0.6, false},
		{"low all along", 0.05, 0.15, false},
	}
	to := time.Unix(1_800_000_000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scripted{matrix: kvBoundAnswer(tt.now, tt.before)}
			r := run(t, scriptedExecutor(p), dq("S", `{"queryType":"saturation","format":"table"}`, to.Add(-10*time.Minute), to)).Responses["S"]
			require.NoError(t, r.Error)
			rows := fleetRows(t, r.Frames[0])
			require.Len(t, rows, 1)
			require.Equal(t, "KV-bound — preempting", rows[0]["verdict"])
			reason := rows[0]["reason"].(string)
			require.Contains(t, reason, "KV cache peaked at 97%")
			if tt.collapse {
				require.Contains(t, reason, "the prefix-cache hit rate collapsed beside it (from 60% to 10%")
				require.Contains(t, reason, "more prompt tokens must be computed and held in the KV cache")
			} else {
				require.NotContains(t, reason, "prefix-cache")
			}
		})
	}
}
