package models

// QueueOptions are the queue type's own options, beyond the grouping and
// filters every type takes.
type QueueOptions struct {
	// Live streams the queue to the panel through Grafana Live (pkg/live)
	// every scrape interval; the backend query answers the same either way.
	Live bool `json:"live"`
	// PriorityScope adds the served rate and mean queue time per vLLM
	// priority class; the running and waiting gauges have no priority.
	PriorityScope
}
