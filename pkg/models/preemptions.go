package models

// PreemptionsOptions are the preemptions type's options.
type PreemptionsOptions struct {
	// AsSeries returns the preemption rate as series instead of annotations.
	AsSeries bool `json:"asSeries"`
	// PerRequest returns the per-request distribution from vLLM's
	// request_num_preemptions histogram (0.30+) as series: the shares of
	// finished requests preempted more than once and (at most) at least
	// once, and the mean and p99 preemptions per request. It implies
	// AsSeries.
	PerRequest bool `json:"perRequest"`
}

// finish makes perRequest a series format.
func (o *PreemptionsOptions) finish() error {
	if o.PerRequest {
		o.AsSeries = true
	}
	return nil
}
