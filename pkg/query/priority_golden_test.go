package query_test

import (
	"testing"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// priorityWaitGoldenQueries pin waitTime grouped and filtered by vLLM's
// priority label. Their recordings (priority_wait_<fleet>.json) come from
// priorityFleet (a 0.32 server scheduling by priority beside a 0.32 one
// scheduling first come, first served and an older V1 one) and from the
// hot fleet, which has no priority anywhere: its goldens pin the notice.
var priorityWaitGoldenQueries = map[string]string{
	"wait_by_priority":          `{"queryType":"waitTime","grouping":"none","byPriority":true}`,
	"wait_instance_by_priority": `{"queryType":"waitTime","grouping":"instance","byPriority":true,"quantiles":[0.99],"live":true}`,
	"wait_high_and_low_only":    `{"queryType":"waitTime","grouping":"instance","family":"ttft","priorities":["<-1",">1"]}`,
}

// priorityFleet is a vLLM 0.32 server scheduling by priority near
// saturation (priorities -3, -1, 0, 1 and 5, so all five label values),
// beside a 0.32 server scheduling first come, first served and an older V1
// server with two engines: a fleet moving to priority scheduling. The
// request log keeps every request of a few minutes' run.
func priorityFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew, cfg.RequestLog = seed, 3, 0, 100000
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	prio := cfg.Engine
	prio.MaxNumSeqs, prio.SchedulingPolicy = 16, sim.PolicyPriority
	prio.PriorityMix = sim.PriorityMix{{Priority: -3, Weight: 1}, {Priority: -1, Weight: 1}, {Priority: 0, Weight: 2},
		{Priority: 1, Weight: 1}, {Priority: 5, Weight: 1}}
	cfg.Instances = []sim.InstanceConfig{
		{Model: "m", Engines: 1, Release: sim.Release032, RateFactor: 4.4, Engine: &prio},
		{Model: "m", Engines: 1, Release: sim.Release032},
		{Model: "m", Engines: 2},
	}
	return cfg
}

// priorityQueueGoldenQueries pin the queue's per-priority series
// (priority_queue_<fleet>.json).
var priorityQueueGoldenQueries = map[string]string{
	"queue_by_priority":      `{"queryType":"queue","grouping":"instance","byPriority":true}`,
	"queue_default_only":     `{"queryType":"queue","grouping":"model","priorities":["0"]}`,
	"queue_none_by_priority": `{"queryType":"queue","grouping":"none","byPriority":true,"priorities":["-1","1"]}`,
}

// prioritySLOGoldenQueries pin slo per priority class
// (priority_slo_<fleet>.json): a latency objective on queue time and an
// availability objective.
var prioritySLOGoldenQueries = map[string]string{
	"slo_queue_by_priority": `{"queryType":"slo","grouping":"instance","family":"queue_time","threshold":1,"window":"1h","byPriority":true}`,
	"slo_availability_high": `{"queryType":"slo","objective":"availability","grouping":"model","window":"1h","priorities":["<-1","-1"],"signals":["attainment","error_budget_left"]}`,
}

// priorityWorkloadGoldenQueries pin the workload's tokens view per
// priority class (priority_workload_<fleet>.json).
var priorityWorkloadGoldenQueries = map[string]string{
	"workload_by_priority": `{"queryType":"workload","grouping":"none","byPriority":true}`,
	"workload_low_only":    `{"queryType":"workload","grouping":"instance","priorities":["1",">1"]}`,
}

func init() {
	for _, set := range []string{"priority_wait_", "priority_queue_", "priority_slo_", "priority_workload_"} {
		setFleets[set] = map[string]func(uint64) sim.Config{
			"mixed": priorityFleet,
			"fcfs":  fleettest.HotFleet,
		}
	}
}

// TestPriorityWaitGoldenFrames replays the priority waitTime recordings.
func TestPriorityWaitGoldenFrames(t *testing.T) {
	checkGoldens(t, "priority_wait_", priorityWaitGoldenQueries)
}

// TestPriorityQueueGoldenFrames replays the priority queue recordings.
func TestPriorityQueueGoldenFrames(t *testing.T) {
	checkGoldens(t, "priority_queue_", priorityQueueGoldenQueries)
}

// TestPrioritySLOGoldenFrames replays the priority slo recordings.
func TestPrioritySLOGoldenFrames(t *testing.T) {
	checkGoldens(t, "priority_slo_", prioritySLOGoldenQueries)
}

// TestPriorityWorkloadGoldenFrames replays the priority workload recordings.
func TestPriorityWorkloadGoldenFrames(t *testing.T) {
	checkGoldens(t, "priority_workload_", priorityWorkloadGoldenQueries)
}
