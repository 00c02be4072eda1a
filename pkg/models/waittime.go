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
}

// Heatmap reports whether the query asks for the latency distribution.
func (o WaitTimeOptions) Heatmap() bool {
	return o.Format == WaitTimeHeatmap
}
