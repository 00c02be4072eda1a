package vllm

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestKVTransferSignalsParseAndEscape(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Scope: nil}
	for _, g := range []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine, models.GroupRole} {
		t.Run(string(g), func(t *testing.T) {
			f := models.Filters{Models: nastyValues, Instances: []string{`a"b`, `}`}}
			sigs := b.KVTransferSignals([]float64{0.5, 0.99}, g, f, "1m")
			require.Len(t, sigs, 7)
			for _, s := range sigs {
				for _, vs := range allSelectors(t, s.Expr) {
					requireMatchesExactly(t, vs, "model_name", nastyValues)
				}
			}
		})
	}
}

func TestKVTransferSignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	sigs := b.KVTransferSignals([]float64{0.5, 0.9, 0.99}, models.GroupRole, models.Filters{}, "30s")
	got := map[string]string{}
	var names []string
	for _, s := range sigs {
		got[s.Name] = s.Expr
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"p50", "p90", "p99", KVTransfers, KVBytes, KVFailedTransfersRate, KVFailedNotifyRate, KVExpiredRequestsRate}, names)
	require.Equal(t, `histogram_quantile(0.99, sum by (le, llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_xfer_time_seconds_bucket[30s])))`, got["p99"])
	require.Equal(t, `sum by (llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_xfer_time_seconds_count[30s]))`, got[KVTransfers])
	require.Equal(t, `sum by (llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_bytes_transferred_sum[30s]))`, got[KVBytes])
	require.Equal(t, `sum by (llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_num_failed_transfers_total[30s]))`, got[KVFailedTransfersRate])
	require.Equal(t, `sum by (llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_num_failed_notifications_total[30s]))`, got[KVFailedNotifyRate])
	require.Equal(t, `sum by (llm_isvc_role, llm_d_ai_role) (rate(vllm:nixl_num_kv_expired_reqs_total[30s]))`, got[KVExpiredRequestsRate])
	for _, s := range sigs {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, s.Expr)
	}
}

// TestKVTransferExpiredOptional: the expired counter (vLLM 0.15) is asked
// for only when detection saw it or saw nothing.
func TestKVTransferExpiredOptional(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		expired bool
	}{
		{"nothing detected", nil, true},
		{"0.11 fleet", []string{"vllm:num_requests_running", "vllm:nixl_xfer_time_seconds_bucket", "vllm:nixl_num_failed_transfers_total"}, false},
		{"0.15 fleet", []string{"vllm:num_requests_running", "vllm:nixl_xfer_time_seconds_bucket", "vllm:nixl_num_kv_expired_reqs_total"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: Detect(tt.names, "vllm:")}
			has := false
			for _, s := range b.KVTransferSignals([]float64{0.5}, models.GroupInstance, models.Filters{}, "1m") {
				has = has || s.Name == KVExpiredRequestsRate
			}
			require.Equal(t, tt.expired, has)
		})
	}
}

// TestKVTransferCatalogue pins the NIXL wire names and the default
// transfer-time buckets against the reference table.
func TestKVTransferCatalogue(t *testing.T) {
	for key, name := range map[SignalKey]string{
		KVXferTime: "vllm:nixl_xfer_time_seconds", KVXferBytes: "vllm:nixl_bytes_transferred",
		KVFailedTransfers: "vllm:nixl_num_failed_transfers_total", KVFailedNotifications: "vllm:nixl_num_failed_notifications_total",
		KVExpired: "vllm:nixl_num_kv_expired_reqs_total",
	} {
		s, ok := Lookup(key)
		require.True(t, ok, key)
		require.Equal(t, []string{name}, s.WireNames("vllm:"))
		require.Contains(t, s.Versions, "NixlConnector")
	}
	raw, err := os.ReadFile("testdata/reference/vllm-metrics.tsv")
	require.NoError(t, err)
	var want string
	for _, line := range strings.Split(string(raw), "\n") {
		if cols := strings.Split(line, "\t"); len(cols) > 5 && cols[0] == "vllm:nixl_xfer_time_seconds" {
			want = cols[5]
		}
	}
	parts := make([]string, len(KVTransferBuckets))
	for i, v := range KVTransferBuckets {
		parts[i] = strconv.FormatFloat(v, 'f', 1, 64)
		if v < 0.1 || v == 0.75 || v == 0.2 || v == 0.3 || v == 0.5 {
			parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	require.Equal(t, want, "["+strings.Join(parts, ",")+"]")
}

// TestKVTransferAlertReadsTheSameCounters: the shipped VLLMKVTransferFailures
// alert and the kvTransfer query read the same NIXL counters.
func TestKVTransferAlertReadsTheSameCounters(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/prometheus/rules/vllm.rules.yml")
	require.NoError(t, err)
	rules := string(raw)
	i := strings.Index(rules, "- alert: VLLMKVTransferFailures")
	require.GreaterOrEqual(t, i, 0, "the alert ships")
	alert := rules[i:]
	if j := strings.Index(alert[1:], "- alert:"); j > 0 {
		alert = alert[:j+1]
	}
	for _, key := range []SignalKey{KVFailedTransfers, KVFailedNotifications} {
		s, _ := Lookup(key)
		require.Contains(t, alert, s.WireNames("vllm:")[0]+"{", "%s", key)
	}
}
