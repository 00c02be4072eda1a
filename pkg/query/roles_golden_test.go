package query_test

import (
	"testing"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// rolesGoldenQueries pin the kvTransfer frames and the role grouping on a
// disaggregated V1 fleet (NIXL does not exist in V0), with recordings of
// their own (roles_v1.json): two prefill and two decode instances scraped
// with llm_isvc_role, some transfers and notifications failing.
var rolesGoldenQueries = map[string]string{
	"kv_transfer":          `{"queryType":"kvTransfer"}`,
	"kv_transfer_instance": `{"queryType":"kvTransfer","grouping":"instance","quantiles":[0.5,0.99]}`,
	"queue_role_legend":    `{"queryType":"queue","grouping":"role","legend":"{{role}} {{signal}} {{reason}}"}`,
	"wait_ttft_role":       `{"queryType":"waitTime","family":"ttft","grouping":"role"}`,
	"saturation_role":      `{"queryType":"saturation","grouping":"role"}`,
	"fleet_roles":          `{"queryType":"fleet"}`,
}

// failingPDFleet is fleettest.PDFleet with a few transfers and completion
// notifications failing, so the failure series are not all zero.
func failingPDFleet(seed uint64) sim.Config {
	cfg := fleettest.PDFleet(seed)
	cfg.Engine.KVTransferFailRate, cfg.Engine.KVNotifyFailRate, cfg.Engine.KVExpireRate = 0.05, 0.05, 0.05
	return cfg
}

func init() { setFleets["roles_"] = map[string]func(uint64) sim.Config{"v1": failingPDFleet} }

// TestRolesGoldenFrames replays the recorded answers of the kvTransfer and
// role-grouped queries and compares every frame with its golden file.
func TestRolesGoldenFrames(t *testing.T) {
	checkGoldens(t, "roles_", rolesGoldenQueries)
}
