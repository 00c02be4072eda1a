//go:build !mutation

package health_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// stallSettings: one-second scrapes, a ten-second stall window.
const stallSettings = `{"scrapeInterval":"1s","stallWindow":"10s"}`

// TestCheckNamesStalledEngines wedges engines of a simulated fleet through
// real Prometheus: no engine is named while all move; the wedged engine is
// named once the stall window has passed, and the loaded but moving one is
// not (health stays OK); once the moving one is wedged too, no awake engine
// makes progress and health fails. The sleeping engine is counted as such
// throughout.
func TestCheckNamesStalledEngines(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.StallFleet(37))
	srv := promtest.Start(t, promtest.Options{Targets: env.Targets()})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 12`, 3, 90*time.Second)
	over, slow := env.Endpoints[0].Addr, env.Endpoints[1].Addr

	res := check(t, srv.URL, stallSettings)
	require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
	require.NotContains(t, res.Message, "stalled (", "every engine moves")
	require.Contains(t, res.Message, "1 engine sleeping")

	wedgeAndWait(t, env, 0)
	res = check(t, srv.URL, stallSettings)
	require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
	require.Contains(t, res.Message, "Warning: 1 engine stalled (requests queued, no progress for 10s): "+over+" engine 0 — restart or drain them")
	require.NotContains(t, res.Message, slow, "the slow engine is loaded but moves")
	require.Equal(t, 1, stalledInDetails(t, res))

	wedgeAndWait(t, env, 1)
	res = check(t, srv.URL, stallSettings)
	require.Equal(t, backend.HealthStatusError, res.Status, res.Message)
	require.Contains(t, res.Message, "no awake engine is making progress: 2 engines stalled")
	require.Contains(t, res.Message, over+" engine 0")
	require.Contains(t, res.Message, slow+" engine 0")
	require.Contains(t, res.Message, "1 engine sleeping")
	require.Equal(t, 2, stalledInDetails(t, res))
}

// wedgeAndWait wedges an instance's engines, checks it holds requests, and
// waits until the stall window (and a few scrapes) has passed since.
func wedgeAndWait(t *testing.T, env *fleettest.Env, instance int) {
	t.Helper()
	require.NoError(t, env.Fleet.Wedge(instance))
	st := env.Fleet.Snapshot().Engines[instance]
	require.True(t, st.Wedged)
	require.Positive(t, st.Running+st.Waiting, "a wedged engine without requests is idle, not stalled: %+v", st)
	time.Sleep(time.Until(env.Fleet.WallTime(st.WedgedAt).Add(10*time.Second + 4*time.Second)))
}

// stalledInDetails is the stalledEngines count of the health details.
func stalledInDetails(t *testing.T, res *backend.CheckHealthResult) int {
	t.Helper()
	var d struct {
		Stalled int `json:"stalledEngines"`
	}
	require.NoError(t, json.Unmarshal(res.JSONDetails, &d), res.Message)
	return d.Stalled
}
