package models

// QueueOptions are the queue type's own options: none yet, beyond the
// grouping and filters every type takes.
type QueueOptions struct{}
