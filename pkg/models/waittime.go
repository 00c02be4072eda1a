package models

// WaitTime formats: quantile and mean series (default), or the family's
// distribution over time as a heatmap.
const (
	WaitTimeSeries  = "series"
	WaitTimeHeatmap = "heatmap"
)

// WaitTimeOptions are the waitTime type's options (its entry in the query
// table): the quantiles, the latency family, the live wait and the format.
type WaitTimeOptions struct {
	// Quantiles are in (0, 1); DefaultQuantiles when none are given.
	Quantiles []float64 `json:"quantiles"`
	// Family is the latency histogram, one of Families.
	Family string `json:"family"`
	// Live adds Little's-law wait, which counts requests still queued.
	Live bool `json:"live"`
	// Format is WaitTimeSeries or WaitTimeHeatmap (requests per latency
	// bucket per step; the quantiles and the live wait do not apply).
	Format string `json:"format"`
	// PriorityScope splits or filters the series by vLLM's priority label.
	PriorityScope
}

// finish refuses a priority scope where it cannot apply: the heatmap,
// whose buckets are summed over the whole fleet, and inter-token latency,
// which vLLM observes per token without the priority label.
func (o *WaitTimeOptions) finish() error {
	if o.Heatmap() && o.PriorityActive() {
		return invalid("byPriority and priorities apply to the %q format, not %q", WaitTimeSeries, WaitTimeHeatmap)
	}
	if o.Family == "itl" && o.PriorityActive() {
		return invalid("vLLM does not label inter-token latency (family itl) by priority; byPriority and priorities apply to the other families")
	}
	return nil
}

// Heatmap reports whether the query asks for the latency distribution.
func (o WaitTimeOptions) Heatmap() bool {
	return o.Format == WaitTimeHeatmap
}
