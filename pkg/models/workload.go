package models

import "encoding/json"

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

// workloadRaw is the workload query's own JSON.
type workloadRaw struct {
	View string `json:"view"`
}

// parseWorkload reads view; an unknown one is an error naming the allowed.
func (q *Query) parseWorkload(js []byte) error {
	var r workloadRaw
	err := json.Unmarshal(js, &r)
	if err != nil {
		return invalid("malformed workload options: %v", err)
	}
	q.View, err = option(QueryWorkload, "view").choose(r.View)
	return err
}

// Heatmap reports whether the workload view is a length distribution.
func (q Query) Heatmap() bool {
	return q.Type == QueryWorkload && (q.View == WorkloadPrompt || q.View == WorkloadGeneration)
}
