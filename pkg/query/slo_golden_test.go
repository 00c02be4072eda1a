package query_test

import "testing"

// sloGoldenQueries pin the slo query's frames: defaults, a snapped
// threshold on the family whose V0 name differs (itl), and no grouping.
// Their recordings are slo_<fleet>.json.
var sloGoldenQueries = map[string]string{
	"slo_defaults":          `{"queryType":"slo"}`,
	"slo_itl_snap_instance": `{"queryType":"slo","family":"itl","threshold":0.06,"target":0.95,"window":"7d","grouping":"instance"}`,
	"slo_e2e_none":          `{"queryType":"slo","family":"e2e","threshold":"5","target":"0.999","window":"1h","grouping":"none"}`,
}

// TestSLOGoldenFrames replays the slo recordings of V1, V0 and mixed fleets.
func TestSLOGoldenFrames(t *testing.T) {
	checkGoldens(t, "slo_", sloGoldenQueries)
}
