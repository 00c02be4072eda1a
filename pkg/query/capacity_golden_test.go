package query_test

import "testing"

// capacityGoldenQueries pin the capacity frames (the table and the demand
// series) for V1, V0 and mixed fleets, with recordings of their own
// (capacity_<fleet>.json).
var capacityGoldenQueries = map[string]string{
	"capacity_model":   `{"queryType":"capacity"}`,
	"capacity_none":    `{"queryType":"capacity","grouping":"none","wait":"ttft","threshold":0.5,"headroom":0,"format":"table"}`,
	"capacity_servers": `{"queryType":"capacity","format":"servers"}`,
}

// TestCapacityGoldenFrames replays the recorded answers of the capacity
// query and compares every frame with its golden file.
func TestCapacityGoldenFrames(t *testing.T) {
	checkGoldens(t, "capacity_", capacityGoldenQueries)
}
