package query_test

import "testing"

// diagnosisGoldenQueries pin the fleet and saturation frames for V1, V0
// and mixed fleets. They have recordings of their own (diag_<fleet>.json).
var diagnosisGoldenQueries = map[string]string{
	"fleet":                   `{"queryType":"fleet"}`,
	"fleet_filtered":          `{"queryType":"fleet","models":["Qwen/Qwen2.5-7B-Instruct"]}`,
	"saturation":              `{"queryType":"saturation"}`,
	"saturation_engine_table": `{"queryType":"saturation","grouping":"instance_engine","format":"table"}`,
}

// TestDiagnosisGoldenFrames replays the recorded answers of the fleet and
// saturation queries and compares every frame with its golden file.
func TestDiagnosisGoldenFrames(t *testing.T) {
	checkGoldens(t, "diag_", diagnosisGoldenQueries)
}
