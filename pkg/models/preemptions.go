package models

// PreemptionsOptions are the preemptions type's options.
type PreemptionsOptions struct {
	// AsSeries returns the preemption rate as series instead of annotations.
	AsSeries bool `json:"asSeries"`
}
