//go:build !mutation

package query_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// queueOnly is a vLLM imitation that exports only the queue gauges.
const queueOnly = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="imitation",engine="0"} 2
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="imitation",engine="0"} 1
`

// TestFleetTable runs the fleet query through real Prometheus scraping a
// mixed fleet (V1 instances, one hot, and a V0 instance), an engine whose
// server then stops (down) and an imitation exporting only the queue
// (missing metrics), and checks every row against the simulator's state.
func TestFleetTable(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.MixedFleet(21))
	gone := fleettest.Run(t, singleV1(22))
	imit := promtest.ServeExposition(t, []byte(queueOnly))
	srv := promtest.Start(t, promtest.Options{Targets: append(append(env.Targets(), gone.Targets()...), imit)})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 15`, 6, 90*time.Second)
	require.NoError(t, gone.Fleet.Close())
	srv.WaitForSeries(t, `up == 0`, 1, 30*time.Second)
	// The query's end is aligned down to its step: let it pass the failed scrape.
	time.Sleep(2 * time.Second)
	to := time.Now()
	e := executor(t, srv.URL)
	resp := run(t, e, dq("A", `{"queryType":"fleet"}`, env.Started, to))
	r := resp.Responses["A"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1)
	rows := fleetRows(t, r.Frames[0])
	hot, v0 := env.Endpoints[0].Addr, env.Endpoints[1].Addr

	t.Run("one row per engine, worst first", func(t *testing.T) {
		require.Len(t, rows, 2+1+2+1+1, "hot V1 (2 engines), V0, V1 (2), the stopped engine, the imitation: %v", rows)
		require.Equal(t, gone.Endpoints[0].Addr, rows[0]["instance"], "%v", rows)
		require.Equal(t, "down", rows[0]["state"])
		require.Equal(t, imit, rows[1]["instance"])
		require.Equal(t, "missing metrics", rows[1]["state"])
		require.Contains(t, rows[1]["missing metrics"], "kv_usage")
		require.Equal(t, hot, rows[2]["instance"], "the hot instance queues and preempts: it leads the engines that are up")
		for i := 1; i < len(rows); i++ {
			require.GreaterOrEqual(t, rows[i-1]["score"].(float64), rows[i]["score"].(float64))
		}
	})
	t.Run("generation and state per engine", func(t *testing.T) {
		for _, row := range rows[2:] {
			require.Equal(t, "up", row["state"], "%v", row)
			want := "V1"
			if row["instance"] == v0 {
				want = "V0"
			}
			require.Equal(t, want, row["generation"], "%v", row)
		}
	})
	t.Run("values match the simulator", func(t *testing.T) {
		waiting := map[string]float64{}
		for _, row := range rows[2:] {
			waiting[row["instance"].(string)] += row["waiting"].(float64)
			require.NotNil(t, row["requests/s"], "%v", row)
			require.NotNil(t, row["kv cache usage"], "%v", row)
			if share := row["error+abort share"]; share != nil {
				require.True(t, share.(float64) >= 0 && share.(float64) <= 1, "%v", row)
			}
		}
		for inst, w := range waiting {
			// The instant query reads the last scrape before the end; the
			// history is snapshotted on the simulator's tick: a few seconds of slack.
			lo, hi, ok := env.WaitingRange(instanceIndex(env, inst), to.Add(-5*time.Second), to.Add(time.Second))
			require.True(t, ok, inst)
			require.True(t, float64(lo) <= w && w <= float64(hi), "%s: the table says %v waiting, the simulator had %d..%d", inst, w, lo, hi)
		}
		hotRow := rows[2]
		require.Greater(t, hotRow["kv cache usage"].(float64), 0.5, "the hot instance's tiny KV cache is nearly full: %v", hotRow)
		require.Greater(t, hotRow["preemptions/min"].(float64), 0.0, "%v", hotRow)
	})
}

func singleV1(seed uint64) sim.Config {
	cfg := fleettest.HotFleet(seed)
	cfg.Instances = []sim.InstanceConfig{{Model: "gone"}}
	return cfg
}

func instanceIndex(env *fleettest.Env, addr string) int {
	for i, ep := range env.Endpoints {
		if ep.Addr == addr {
			return i
		}
	}
	return -1
}
