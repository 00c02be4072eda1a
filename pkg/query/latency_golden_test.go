package query_test

import "testing"

// latencyGoldenQueries pin the waitTime query's heatmap format: a latency
// family's requests (token gaps for itl) per bucket per step, as
// heatmap-rows, for a step of four scrapes (exact counts) and a shorter
// one (the smoothed estimate and its notice). Their recordings are
// latency_<fleet>.json.
var latencyGoldenQueries = map[string]string{
	"latency_queue_time_model":    `{"queryType":"waitTime","format":"heatmap","grouping":"model"}`,
	"latency_ttft_none":           `{"queryType":"waitTime","format":"heatmap","family":"ttft","grouping":"none"}`,
	"latency_itl_step_instance":   `{"queryType":"waitTime","format":"heatmap","family":"itl","grouping":"instance","interval":"5s"}`,
	"latency_e2e_instance_engine": `{"queryType":"waitTime","format":"heatmap","family":"e2e","grouping":"instance_engine"}`,
}

// TestLatencyHeatmapGoldenFrames replays the latency-heatmap recordings of
// V1, V0 and mixed fleets (V0 and V1 share the latency families' bucket
// lists, mostly; a mixed fleet keeps every bound either has).
func TestLatencyHeatmapGoldenFrames(t *testing.T) {
	checkGoldens(t, "latency_", latencyGoldenQueries)
}
