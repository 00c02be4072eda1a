//go:build !mutation

package query_test

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// stallWindow is the data source's stall window in the test: ten scrapes.
const stallWindow = 10 * time.Second

// TestStalledEngine wedges one loaded engine through real Prometheus and
// checks that the fleet table calls it stalled and its saturation verdict
// turns stalled within the stall window of the true wedge instant (and not
// before the window has passed), while the slow engine that still moves is
// neither, and the sleeping engine is sleeping.
func TestStalledEngine(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.StallFleet(31))
	srv := promtest.Start(t, promtest.Options{Targets: env.Targets()})
	// Sixteen scrapes before the wedge, more than the stall window: the
	// saturation range starts 5 s before the wedge, and a first step whose
	// window reaches back before the first scrape judged the slow engine by
	// two or three samples (it read as stalled there once in a full run).
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 16`, 3, 90*time.Second)
	require.NoError(t, env.Fleet.Wedge(0))
	st := env.Fleet.Snapshot().Engines[0]
	require.True(t, st.Wedged)
	wedged := env.Fleet.WallTime(st.WedgedAt)
	time.Sleep(time.Until(wedged.Add(stallWindow + 5*time.Second)))
	to := time.Now().Truncate(time.Second)
	e := settingsExecutor(t, srv.URL, `{"scrapeInterval":"1s","stallWindow":"10s"}`)
	stuck, slow, asleep := env.Endpoints[0].Addr, env.Endpoints[1].Addr, env.Endpoints[2].Addr

	t.Run("fleet states", func(t *testing.T) {
		r := run(t, e, dq("F", `{"queryType":"fleet"}`, env.Started, to)).Responses["F"]
		require.NoError(t, r.Error)
		rows := map[string]map[string]any{}
		for _, row := range fleetRows(t, r.Frames[0]) {
			rows[row["instance"].(string)] = row
		}
		require.Equal(t, query.StateStalled, rows[stuck]["state"], "%v", rows[stuck])
		require.Positive(t, rows[stuck]["waiting"].(float64)+rows[stuck]["running"].(float64), "a stalled engine holds requests")
		require.Equal(t, query.StateUp, rows[slow]["state"], "slow but moving: %v", rows[slow])
		require.Positive(t, rows[slow]["running"].(float64), "the slow engine is loaded: %v", rows[slow])
		require.Equal(t, query.StateSleeping, rows[asleep]["state"], "%v", rows[asleep])
	})
	t.Run("saturation verdicts", func(t *testing.T) {
		r := run(t, e, dq("S", `{"queryType":"saturation"}`, wedged.Add(-5*time.Second), to)).Responses["S"]
		require.NoError(t, r.Error)
		frames := byName(r.Frames)
		verdicts := func(addr string) []stepVerdict {
			tl := frames[addr+" verdict"]
			require.NotNil(t, tl, "no verdict timeline for %s; frames: %v", addr, keys(frames))
			return timeline(tl)
		}
		var first time.Time
		for _, s := range verdicts(stuck) {
			if s.verdict == vllm.VerdictStalled && first.IsZero() {
				first = s.at
			}
		}
		require.False(t, first.IsZero(), "never stalled: %v", verdicts(stuck))
		t.Logf("wedged at %s, first stalled step %s (%s later)", wedged.Format(time.RFC3339Nano), first.Format(time.RFC3339), first.Sub(wedged))
		require.False(t, first.Before(wedged.Add(stallWindow-2*time.Second)), "stalled before the window passed: %v", verdicts(stuck))
		require.False(t, first.After(wedged.Add(stallWindow+3*time.Second)), "stalled too late: %v", verdicts(stuck))
		for _, s := range verdicts(slow) {
			require.NotEqual(t, vllm.VerdictStalled, s.verdict, "the slow engine moves: %v", verdicts(slow))
		}
		table := frames["saturation"]
		require.NotNil(t, table)
		got := map[string]string{}
		for i := 0; i < table.Rows(); i++ {
			got[table.Fields[0].At(i).(string)] = table.Fields[1].At(i).(string)
		}
		require.Equal(t, vllm.VerdictStalled, got[stuck])
		require.NotEqual(t, vllm.VerdictStalled, got[slow])
		require.NotEqual(t, vllm.VerdictStalled, got[asleep])
	})
}

type stepVerdict struct {
	at      time.Time
	verdict string
}

func timeline(tl *data.Frame) []stepVerdict {
	out := make([]stepVerdict, tl.Rows())
	for i := range out {
		out[i] = stepVerdict{tl.Fields[0].At(i).(time.Time), tl.Fields[1].At(i).(string)}
	}
	return out
}
