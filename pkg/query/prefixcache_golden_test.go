package query_test

import "testing"

// prefixGoldenQueries pin the prefixCache frames for V1, V0 and mixed
// fleets, with recordings of their own (prefix_<fleet>.json).
var prefixGoldenQueries = map[string]string{
	"prefix_cache_instance": `{"queryType":"prefixCache","grouping":"instance"}`,
	"prefix_cache_model":    `{"queryType":"prefixCache","grouping":"model","legend":"{{model_name}} {{signal}}"}`,
	"prefix_cache_none":     `{"queryType":"prefixCache","grouping":"none"}`,
}

// TestPrefixCacheGoldenFrames replays the recorded answers of the
// prefixCache query and compares every frame with its golden file.
func TestPrefixCacheGoldenFrames(t *testing.T) {
	checkGoldens(t, "prefix_", prefixGoldenQueries)
}
