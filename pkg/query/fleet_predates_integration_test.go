//go:build !mutation

package query_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// TestFleetPredates runs the fleet table through real Prometheus scraping
// recorded expositions of vLLM 0.4.3 (V0, before request_queue_time_seconds)
// and 0.8.2 (early V1, before the engine label) beside two current
// simulator engines, one of which has request_queue_time_seconds dropped
// by a metric relabelling. The old engines are up with their absent cells
// empty, a notice names the release that added each absent family, and
// they score as healthy engines do (no state weight), below the relabelled
// engine, which stays "missing metrics".
func TestFleetPredates(t *testing.T) {
	t.Parallel()
	cfg := fleettest.HotFleet(41)
	cfg.Instances = []sim.InstanceConfig{{Model: "current"}, {Model: "relabelled"}}
	env := fleettest.Run(t, cfg)
	current, relabelled := env.Endpoints[0].Addr, env.Endpoints[1].Addr
	old04 := promtest.ServeFile(t, "testdata/expositions/vllm-0.4.3.prom")
	old08 := promtest.ServeFile(t, "testdata/expositions/vllm-0.8.2.prom")
	srv := promtest.Start(t, promtest.Options{Targets: append(env.Targets(), old04, old08), MetricRelabel: fmt.Sprintf(
		"      - source_labels: [__name__, instance]\n        regex: 'vllm:request_queue_time_seconds_.*;%s'\n        action: drop\n", regexp.QuoteMeta(relabelled))})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 15`, 4, 90*time.Second)
	resp := run(t, executor(t, srv.URL), dq("A", `{"queryType":"fleet"}`, env.Started, time.Now()))
	r := resp.Responses["A"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1)
	rows := fleetRows(t, r.Frames[0])
	require.Len(t, rows, 4, "%v", rows)
	byInst := map[string]map[string]any{}
	for _, row := range rows {
		byInst[row["instance"].(string)] = row
	}

	t.Run("the relabelled current engine is missing metrics and leads", func(t *testing.T) {
		row := byInst[relabelled]
		require.Equal(t, "missing metrics", row["state"], "%v", row)
		require.Equal(t, "queue_p99", row["missing metrics"])
		require.Equal(t, relabelled, rows[0]["instance"], "%v", rows)
		require.Equal(t, "up", byInst[current]["state"], "%v", byInst[current])
	})
	t.Run("old engines are up with empty cells and no state weight", func(t *testing.T) {
		for inst, gen := range map[string]string{old04: "V0", old08: "V1"} {
			row := byInst[inst]
			require.Equal(t, "up", row["state"], "%v", row)
			require.Equal(t, gen, row["generation"], "%v", row)
			require.Equal(t, "", row["missing metrics"], "%v", row)
			require.Nil(t, row["queue time p99"], "%v", row)
			require.Equal(t, "", row["engine"], "neither exports an engine label: %v", row)
			// Static expositions: no rates, nothing waiting; the score is
			// 10 × KV-cache usage, what a healthy engine with these values gets.
			require.InDelta(t, 10*row["kv cache usage"].(float64), row["score"].(float64), 0.001, "%v", row)
			require.Less(t, row["score"].(float64), byInst[relabelled]["score"].(float64))
		}
		require.NotNil(t, byInst[old08]["waiting"])
	})
	t.Run("notices name the release that added each absent family", func(t *testing.T) {
		var texts []string
		for _, n := range r.Frames[0].Meta.Notices {
			texts = append(texts, n.Text)
		}
		all := strings.Join(texts, "\n")
		require.Contains(t, all, "The \"queue time p99\" column is empty for engines whose vLLM predates vllm:request_queue_time_seconds (added in V0 0.6.4): "+old04+".")
		require.Contains(t, all, "The \"engine\" column is empty for V1 servers whose vLLM predates the engine label (added in V1 0.8.3): "+old08+".")
		require.NotContains(t, all, relabelled+".", "the relabelled engine is missing metrics, not predated: %s", all)
	})
}
