package sim_test

import (
	"fmt"
	"time"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

// A test simulates an hour of an over-committed engine in milliseconds and
// reads the true preemption count that vllm:num_preemptions_total must show.
func Example() {
	cfg := sim.DefaultConfig()
	cfg.Rate = 0.7
	cfg.Engine.NumGPUBlocks = 48 // a tiny KV cache forces preemptions
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.Uniform, A: 50, B: 200}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.Uniform, A: 100, B: 300}
	cfg.Instances = []sim.InstanceConfig{{Model: "meta-llama/Llama-3.1-8B-Instruct"}}
	fleet, err := sim.NewFleet(cfg)
	if err != nil {
		panic(err)
	}
	defer fleet.Close()

	if err := fleet.Advance(time.Hour); err != nil {
		panic(err)
	}
	e := fleet.Snapshot().Engines[0]
	fmt.Println(e.Preemptions > 0, e.Preemptions == int64(len(fleet.PreemptionEvents())))
	// Output: true true
}
