package models

// PriorityClasses are the values of the priority label vLLM 0.32 writes on
// its finished-request families under --scheduling-policy priority
// (vllm/v1/metrics/loggers.py bucket_priority): -1, 0 and 1 as they are,
// every lower value as "<-1" and every higher one as ">1". Lower values are
// served first.
var PriorityClasses = []string{"<-1", "-1", "0", "1", ">1"}

// PriorityScope is the priority grouping and filter of the query types that
// read finished-request families (waitTime, slo, workload, queue): the
// series split by the priority label and/or kept to some of its values.
// Families without the label (fcfs engines, releases before 0.32) answer
// without a priority, or not at all under a filter, with a notice.
type PriorityScope struct {
	// ByPriority adds the priority label to the grouping.
	ByPriority bool `json:"byPriority"`
	// Priorities keeps only these classes (PriorityClasses); empty keeps all.
	Priorities []string `json:"priorities"`
}

// PriorityActive reports whether the query groups or filters by priority.
func (s PriorityScope) PriorityActive() bool { return s.ByPriority || len(s.Priorities) > 0 }

// priorityOptions are the scope's two entries in a type's table.
func priorityOptions() []Option {
	return []Option{
		{Field: "byPriority", Kind: KindBoolean},
		{Field: "priorities", Kind: KindChoices, Values: PriorityClasses},
	}
}
