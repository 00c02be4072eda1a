package models

// QueryWorkload answers the shape of the work the fleet is given: how long
// prompts and outputs are (length distributions, or their means over time),
// how many requests finish per second and what share of them ends in error.
const QueryWorkload QueryType = "workload"

// Workload views.
const (
	// WorkloadTokens (default): mean prompt and generation tokens per
	// request, finished requests per second and the error share, as series.
	WorkloadTokens = "tokens"
	// WorkloadPrompt: the prompt-length distribution, requests per length
	// bucket per step, as a heatmap.
	WorkloadPrompt = "prompt"
	// WorkloadGeneration: the same for generated tokens.
	WorkloadGeneration = "generation"
)

// WorkloadOptions are the workload type's options.
type WorkloadOptions struct {
	// View is one of WorkloadViews.
	View string `json:"view"`
	// PriorityScope splits or filters the tokens view by vLLM's priority
	// label.
	PriorityScope
}

// finish refuses a priority scope on the length distributions, whose
// buckets are summed over the grouping.
func (o *WorkloadOptions) finish() error {
	if o.Heatmap() && o.PriorityActive() {
		return invalid("byPriority and priorities apply to the %q view, not %q", WorkloadTokens, o.View)
	}
	return nil
}

// Heatmap reports whether the view is a length distribution.
func (o WorkloadOptions) Heatmap() bool {
	return o.View == WorkloadPrompt || o.View == WorkloadGeneration
}
