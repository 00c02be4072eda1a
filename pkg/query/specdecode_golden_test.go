package query_test

import (
	"testing"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// specLoRAGoldenQueries pin the specDecode and lora frames. Their
// recordings (speclora_<fleet>.json) come from fleets whose V1 engines
// run speculative decoding and LoRA; V0 engines export neither the spec
// counters (in the simulator) nor LoRA (max_lora="0"), so the v0 goldens
// pin the notices instead.
var specLoRAGoldenQueries = map[string]string{
	"specdecode_instance":  `{"queryType":"specDecode"}`,
	"specdecode_none":      `{"queryType":"specDecode","grouping":"none"}`,
	"specdecode_engine":    `{"queryType":"specDecode","grouping":"instance_engine","legend":"{{instance}}/{{engine}} {{signal}}"}`,
	"lora_table":           `{"queryType":"lora"}`,
	"lora_series":          `{"queryType":"lora","format":"series"}`,
	"lora_table_one_model": `{"queryType":"lora","models":["Qwen/Qwen2.5-7B-Instruct"]}`,
}

// withSpecAndLoRA turns on speculative decoding (3 draft tokens, 0.7 per
// position) and LoRA (6 adapters, 2 at a time) on every V1 instance.
func withSpecAndLoRA(fleet func(uint64) sim.Config) func(uint64) sim.Config {
	return func(seed uint64) sim.Config {
		cfg := fleet(seed)
		on := func(p *sim.EngineParams) {
			p.SpecTokens, p.SpecAcceptance, p.LoRAAdapters, p.MaxLoRAs = 3, 0.7, 6, 2
		}
		for i := range cfg.Instances {
			ic := &cfg.Instances[i]
			if ic.Generation == sim.V0 {
				continue
			}
			p := cfg.Engine
			if ic.Engine != nil {
				p = *ic.Engine
			}
			on(&p)
			ic.Engine = &p
		}
		return cfg
	}
}

func init() {
	setFleets["speclora_"] = map[string]func(uint64) sim.Config{
		"v1":    withSpecAndLoRA(fleettest.HotFleet),
		"v0":    v0Fleet,
		"mixed": withSpecAndLoRA(fleettest.MixedFleet),
	}
}

// TestSpecLoRAGoldenFrames replays the specDecode and lora recordings.
func TestSpecLoRAGoldenFrames(t *testing.T) {
	checkGoldens(t, "speclora_", specLoRAGoldenQueries)
}
