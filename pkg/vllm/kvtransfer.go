package vllm

import (
	"fmt"
	"strconv"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// The NIXL KV-transfer signals: vLLM's NixlConnector exports them on both
// sides of a disaggregated fleet (prefill and decode engines) when started
// with --kv-transfer-config naming NixlConnector.
const (
	KVXferTime            SignalKey = "kv_xfer_time"
	KVXferBytes           SignalKey = "kv_xfer_bytes"
	KVFailedTransfers     SignalKey = "kv_failed_transfers"
	KVFailedNotifications SignalKey = "kv_failed_notifications"
	KVExpired             SignalKey = "kv_expired_requests"
)

// UnitBytes is Grafana's unit id for a byte count.
const UnitBytes Unit = "bytes"

// kvTransferVersions is the Versions text of the NIXL signals: the release
// and the setting that make vLLM export them.
const kvTransferVersions = "V1 from 0.11.1, only with --kv-transfer-config naming NixlConnector " +
	"(prefill/decode disaggregation, e.g. '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}')"

// kvTransferCatalogue are the catalogue rows of the NIXL signals (facts:
// vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py).
var kvTransferCatalogue = []Signal{
	{Key: KVXferTime, Kind: Histogram, Unit: UnitSeconds, V1: "nixl_xfer_time_seconds", Help: "KV transfer time",
		Versions: "vllm:nixl_xfer_time_seconds: " + kvTransferVersions},
	{Key: KVXferBytes, Kind: Histogram, Unit: UnitBytes, V1: "nixl_bytes_transferred", Help: "Bytes per KV transfer",
		Versions: "vllm:nixl_bytes_transferred: " + kvTransferVersions},
	{Key: KVFailedTransfers, Kind: Counter, Unit: UnitCount, V1: "nixl_num_failed_transfers_total", Help: "Failed KV transfers",
		Versions: "vllm:nixl_num_failed_transfers_total: " + kvTransferVersions},
	{Key: KVFailedNotifications, Kind: Counter, Unit: UnitCount, V1: "nixl_num_failed_notifications_total", Help: "Failed KV-transfer notifications",
		Versions: "vllm:nixl_num_failed_notifications_total: " + kvTransferVersions},
	{Key: KVExpired, Kind: Counter, Unit: UnitRequests, V1: "nixl_num_kv_expired_reqs_total", Help: "Requests whose KV blocks expired on the prefill engine before decode read them",
		Versions: "vllm:nixl_num_kv_expired_reqs_total: V1 from 0.15.0, only with --kv-transfer-config naming NixlConnector (counted on the prefill engine)"},
}

// KVTransferBuckets are vLLM's default bounds of nixl_xfer_time_seconds.
var KVTransferBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}

// Names of the kvTransfer query's series (SignalTagLabel values) besides the
// transfer-time quantiles (QuantileName: p50, p99, …).
const (
	KVTransfers           = "transfers"
	KVBytes               = "bytes"
	KVFailedTransfersRate = "failed_transfers"
	KVFailedNotifyRate    = "failed_notifications"
	KVExpiredRequestsRate = "expired_requests"
)

// KVTransferUnits are the Grafana units of the kvTransfer series; the
// quantiles are seconds.
var KVTransferUnits = map[string]string{
	KVTransfers: "ops", KVBytes: "Bps", KVFailedTransfersRate: "ops", KVFailedNotifyRate: "ops", KVExpiredRequestsRate: "reqps",
}

// KVTransferSignals are the kvTransfer query's plain expressions per
// grouping, run concurrently like the queue's: each transfer-time quantile
// (histogram_quantile over the rate of the buckets summed by le and the
// group), transfers per second (the histogram's count), bytes per second
// (the bytes histogram's sum), and the failed transfers, failed
// notifications and expired requests per second. The expired counter
// (vLLM 0.15) is left out when detection saw names but not it.
func (b Builder) KVTransferSignals(quantiles []float64, g models.Grouping, f models.Filters, window string) []SignalExpr {
	gl := b.GroupLabels(g)
	var out []SignalExpr
	for _, q := range quantiles {
		hq := fmt.Sprintf("histogram_quantile(%s, %s)", strconv.FormatFloat(q, 'g', -1, 64),
			agg("sum", append([]string{"le"}, gl...), b.rateUnion(KVXferTime, f, "_bucket", window)))
		out = append(out, SignalExpr{QuantileName(q), hq})
	}
	rate := func(key SignalKey, suffix string) string { return agg("sum", gl, b.rateUnion(key, f, suffix, window)) }
	out = append(out,
		SignalExpr{KVTransfers, rate(KVXferTime, "_count")},
		SignalExpr{KVBytes, rate(KVXferBytes, "_sum")},
		SignalExpr{KVFailedTransfersRate, rate(KVFailedTransfers, "")},
		SignalExpr{KVFailedNotifyRate, rate(KVFailedNotifications, "")},
	)
	if b.optional(KVExpired) {
		out = append(out, SignalExpr{KVExpiredRequestsRate, rate(KVExpired, "")})
	}
	return out
}

// KVTransferQuantileTags are the SignalTagLabel values of the quantiles.
func KVTransferQuantileTags(quantiles []float64) []string {
	out := make([]string, len(quantiles))
	for i, q := range quantiles {
		out[i] = QuantileName(q)
	}
	return out
}
