package query_test

import "testing"

// workloadGoldenQueries pin the workload query's frames (token means and
// error share as series; prompt and generation lengths as heatmap-rows)
// and the availability objective of the slo query. Their recordings are
// workload_<fleet>.json, so the other recordings stay as they were.
var workloadGoldenQueries = map[string]string{
	"workload_tokens_model":         `{"queryType":"workload","grouping":"model"}`,
	"workload_prompt_model":         `{"queryType":"workload","view":"prompt","grouping":"model"}`,
	"workload_generation_none":      `{"queryType":"workload","view":"generation","grouping":"none"}`,
	"workload_prompt_step_instance": `{"queryType":"workload","view":"prompt","grouping":"instance","interval":"5s"}`,
	"slo_availability_instance":     `{"queryType":"slo","objective":"availability","window":"1h","grouping":"instance"}`,
	"slo_availability_burn_1h_none": `{"queryType":"slo","objective":"availability","target":0.99,"signals":["burn_1h_5m"],"grouping":"none"}`,
}

// TestWorkloadGoldenFrames replays the workload recordings of V1, V0 and
// mixed fleets (V0 had both length histograms and request_success, but no
// error reason).
func TestWorkloadGoldenFrames(t *testing.T) {
	checkGoldens(t, "workload_", workloadGoldenQueries)
}
