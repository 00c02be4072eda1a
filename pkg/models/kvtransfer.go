package models

// QueryKVTransfer answers how KV blocks move between prefill and decode
// engines in a disaggregated fleet (vLLM's NixlConnector): transfer-time
// quantiles, bytes and transfers per second, and the failure counters.
const QueryKVTransfer QueryType = "kvTransfer"

// parseKVTransfer reads the transfer-time quantiles (default p50, p90,
// p99). Its default grouping, role, is in the query table.
func (q *Query) parseKVTransfer(raw rawQuery) error {
	return q.parseQuantiles(raw.Quantiles)
}

// parseQuantiles sets q.Quantiles, the defaults when none are given, each
// inside the option's range, (0, 1).
func (q *Query) parseQuantiles(qs []float64) error {
	opt := option(q.Type, "quantiles")
	q.Quantiles = qs
	if len(q.Quantiles) == 0 {
		q.Quantiles = append([]float64(nil), opt.Default.([]float64)...)
	}
	for _, v := range q.Quantiles {
		if !opt.Range.Contains(v) {
			return invalid("quantile %v is out of range %s", v, opt.Range)
		}
	}
	return nil
}
