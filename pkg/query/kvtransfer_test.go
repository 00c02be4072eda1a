package query_test

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// TestKVTransferWithoutNIXL: a fleet whose engines export no NIXL metric
// gets an empty answer with a notice naming the metrics and the vLLM
// setting that turns them on, never an error.
func TestKVTransferWithoutNIXL(t *testing.T) {
	p := &scripted{instant: func(expr string, _ time.Time) model.Vector {
		if strings.HasPrefix(expr, "count(last_over_time(") && strings.Contains(expr, "num_requests_running") {
			return model.Vector{{Value: 4}} // four engines report; none has the NIXL series
		}
		return model.Vector{}
	}}
	now := time.Now()
	r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"kvTransfer"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	text := noticeTexts(r.Frames)
	for _, want := range []string{"vllm:nixl_xfer_time_seconds", "vllm:nixl_num_failed_transfers_total", "vllm:nixl_bytes_transferred",
		"--kv-transfer-config", "NixlConnector"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "no role label", "an empty answer is not a missing role")
}

// TestKVTransferBelowSmallestBucket: transfer-time quantiles under the
// smallest bucket (5 ms by vLLM's default) are flagged as interpolated.
func TestKVTransferBelowSmallestBucket(t *testing.T) {
	for _, tt := range []struct {
		value  float64
		notice bool
	}{{0.001, true}, {0.005, false}, {0.2, false}} {
		p := &scripted{matrix: func(expr string, _ v1.Range) model.Matrix {
			if !strings.HasPrefix(expr, "histogram_quantile(0.5,") {
				return nil
			}
			return model.Matrix{{Metric: model.Metric{"llm_isvc_role": "decode"}, Values: []model.SamplePair{{Timestamp: 0, Value: model.SampleValue(tt.value)}}}}
		}}
		now := time.Now()
		r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"kvTransfer"}`, now.Add(-time.Hour), now)).Responses["A"]
		require.NoError(t, r.Error)
		text := noticeTexts(r.Frames)
		if tt.notice {
			require.Contains(t, text, "Some p50 transfer times are below 0.005s")
		} else {
			require.NotContains(t, text, "transfer times are below")
		}
		require.Equal(t, "decode p50", r.Frames[0].Name)
		require.Equal(t, "decode", r.Frames[0].Fields[1].Labels["role"])
		require.Equal(t, "s", r.Frames[0].Fields[1].Config.Unit)
	}
}

// TestRoleGrouping: the role comes from whichever known label a series
// carries, or from the data source's roleLabel alone; series without any
// are one group with an info notice.
func TestRoleGrouping(t *testing.T) {
	tests := []struct {
		name, roleLabel string
		metric          model.Metric
		frame, role     string
		notice          bool
	}{
		{"KServe", "", model.Metric{"llm_isvc_role": "prefill"}, "prefill running", "prefill", false},
		{"llm-d as scraped", "", model.Metric{"llm_d_ai_role": "decode"}, "decode running", "decode", false},
		{"no role label", "", model.Metric{}, "running", "", true},
		{"roleLabel set", "pd", model.Metric{"pd": "decode"}, "decode running", "decode", false},
		{"roleLabel set, series carry another", "pd", model.Metric{}, "running", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			p := &scripted{matrix: func(expr string, _ v1.Range) model.Matrix {
				asked = append(asked, expr)
				if !strings.Contains(expr, "num_requests_running") {
					return nil
				}
				return model.Matrix{{Metric: tt.metric, Values: []model.SamplePair{{Timestamp: 0, Value: 3}}}}
			}}
			e := scriptedExecutor(p)
			e.Settings.RoleLabel = tt.roleLabel
			now := time.Now()
			r := run(t, e, dq("A", `{"queryType":"queue","grouping":"role"}`, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			fs := byName(r.Frames)
			require.Contains(t, fs, tt.frame)
			require.Equal(t, tt.role, fs[tt.frame].Fields[1].Labels["role"])
			require.Equal(t, tt.notice, strings.Contains(noticeTexts(r.Frames), "no role label on the series"))
			if e.Settings.RoleLabel != "" {
				require.NotContains(t, strings.Join(asked, "\n"), "llm_isvc_role", "roleLabel replaces the known labels")
			}
		})
	}
}
