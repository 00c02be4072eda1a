package models

// WaitTimeOptions are the waitTime type's options (its entry in the query
// table): the quantiles, the latency family and the live wait.
type WaitTimeOptions struct {
	// Quantiles are in (0, 1); DefaultQuantiles when none are given.
	Quantiles []float64 `json:"quantiles"`
	// Family is the latency histogram, one of Families.
	Family string `json:"family"`
	// Live adds Little's-law wait, which counts requests still queued.
	Live bool `json:"live"`
}
