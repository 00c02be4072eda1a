package models

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// QueryCapacity answers how many replicas each model needs: the demand it
// is given, what one replica sustains (measured from the fleet's own
// history), the replicas needed to meet a queue-time or TTFT objective,
// and what the fleet would do with each replica count (a what-if run on a
// simulated twin of its engines).
const QueryCapacity QueryType = "capacity"

// Capacity objectives (the wait option): the p99 of which wait the replica
// count must keep under the threshold.
const (
	CapacityQueueTime = "queue_time"
	CapacityTTFT      = "ttft"
)

// CapacityOptions are the capacity type's options.
type CapacityOptions struct {
	// Wait is the objective's wait, CapacityQueueTime or CapacityTTFT: its
	// p99 must stay at or under Threshold seconds.
	Wait      string  `json:"wait"`
	Threshold float64 `json:"threshold"`
	// Headroom is the spare share of capacity kept on top of the demand
	// (0.2: plan for 20% more than today's peak-adjusted load).
	Headroom float64 `json:"headroom"`
	// Drain is how soon the queue standing now must be worked off, as
	// written ("5m"); DrainDuration is it parsed. The closed form (and the
	// autoscaler rule) adds queue ÷ drain to the arrival rate.
	Drain         string        `json:"drain"`
	DrainDuration time.Duration `json:"-"`
	// Format is "both" (default: the table, the what-if and the demand
	// series), "table" (one row per group), "series" (the demand over time,
	// alertable), "whatif" (the predictions per replica count) or "servers"
	// (the efficiency columns per server: which one wastes its GPUs).
	Format string `json:"format"`
}

// finish parses the drain time the table has checked.
func (o *CapacityOptions) finish() error {
	d, err := model.ParseDuration(o.Drain)
	if err != nil {
		return fmt.Errorf("models: capacity drain %q passed the table: %w", o.Drain, err)
	}
	o.DrainDuration = time.Duration(d)
	return nil
}
