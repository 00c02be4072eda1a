package models

// QueryKVTransfer answers how KV blocks move between prefill and decode
// engines in a disaggregated fleet (vLLM's NixlConnector): transfer-time
// quantiles, bytes and transfers per second, and the failure counters.
const QueryKVTransfer QueryType = "kvTransfer"

// parseKVTransfer reads the transfer-time quantiles (default p50, p90,
// p99). Without a grouping it splits by role: a disaggregated fleet's
// first question is which side, prefill or decode, is slow or failing.
func (q *Query) parseKVTransfer(raw rawQuery) error {
	if raw.Grouping == "" {
		q.Grouping = GroupRole
	}
	return q.parseQuantiles(raw.Quantiles)
}

// parseQuantiles sets q.Quantiles, the defaults when none are given, each
// inside (0, 1).
func (q *Query) parseQuantiles(qs []float64) error {
	q.Quantiles = qs
	if len(q.Quantiles) == 0 {
		q.Quantiles = append([]float64(nil), DefaultQuantiles...)
	}
	for _, v := range q.Quantiles {
		if !(v > 0 && v < 1) {
			return invalid("quantile %v is out of range (0, 1)", v)
		}
	}
	return nil
}
