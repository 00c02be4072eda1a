//go:build !mutation

package query_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestFleetScrapeHealth runs the fleet query through real Prometheus (2s
// scrapes, so a 2s timeout) scraping a mixed fleet through flaky proxies:
// the hot V1 server answers 500 on every third scrape, the V0 server's
// /metrics takes 1.2s on every scrape (60% of the timeout) and sleeps past
// the timeout on every third, the other V1 server is steady. Both flaky
// servers must read flapping (or down, at a moment their last scrape
// failed; never up) and the steady one up; the scrape columns are the last
// scrape's seconds and their share of the timeout: scrape_timeout_seconds
// on a Prometheus with the extra-scrape-metrics feature (the data source's
// scrape interval set to 1m there, so an assumed timeout, 10s, would read
// six times lower), else the assumed timeout (10s capped by the 2s setting).
func TestFleetScrapeHealth(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.MixedFleet(35))
	steady := env.Endpoints[2].Addr
	tests := []struct {
		name, settings string
		args           []string
		timeoutSeries  int
	}{
		{"scrape_timeout_seconds stored", `{"scrapeInterval":"1m"}`, []string{"--enable-feature=extra-scrape-metrics"}, 3},
		{"timeout assumed", `{"scrapeInterval":"2s"}`, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Proxies of its own: each counts the scrapes of one Prometheus.
			failing := promtest.FlakyTarget(t, env.Endpoints[0].Addr, promtest.Flaky{Status: http.StatusInternalServerError, Every: 3})
			slow := promtest.FlakyTarget(t, env.Endpoints[1].Addr, promtest.Flaky{Delay: 1200 * time.Millisecond, Stall: 2 * time.Second, Every: 3})
			srv := promtest.Start(t, promtest.Options{Targets: []string{failing, slow, steady}, ScrapeInterval: 2 * time.Second, Args: tt.args})
			srv.WaitForSeries(t, `changes(up[1m]) >= 2`, 2, 120*time.Second)
			require.Len(t, srv.Query(t, "scrape_timeout_seconds"), tt.timeoutSeries)
			rows := flappingTable(t, srv.URL, tt.settings, env.Started, []string{failing, slow})
			for _, row := range rows {
				t.Logf("%s %s: scrape %vs, %v of the timeout", row["instance"], row["state"], row["scrape s"], row["scrape % of timeout"])
				secs, share := row["scrape s"].(float64), row["scrape % of timeout"].(float64)
				require.InDelta(t, secs/2, share, 1e-9, "the share is of the 2s timeout: %v", row)
				switch row["instance"] {
				case steady:
					require.Equal(t, "up", row["state"], "%v", row)
					require.Less(t, share, 0.5, "%v", row)
				case slow:
					require.Equal(t, "V0", row["generation"], "%v", row)
					require.Greater(t, share, 0.55, "its scrapes take 1.2s of 2s: %v", row)
					require.Less(t, share, 1.1, "%v", row)
				case failing:
					require.Equal(t, "V1", row["generation"], "%v", row)
				}
			}
		})
	}
}

// flappingTable asks for the fleet table until every flaky server reads
// flapping: at a moment when a flaky server's last scrape failed it is
// down (up is 0 then) or, just after, stale, and never up. The steady
// engines are up throughout. It returns the rows of the table that showed
// every flaky one flapping.
func flappingTable(t *testing.T, url, settings string, from time.Time, flaky []string) []map[string]any {
	t.Helper()
	e := settingsExecutor(t, url, settings)
	isFlaky := map[string]bool{}
	for _, f := range flaky {
		isFlaky[f] = true
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp := run(t, e, dq("A", `{"queryType":"fleet"}`, from, time.Now()))
		r := resp.Responses["A"]
		require.NoError(t, r.Error)
		rows := fleetRows(t, r.Frames[0])
		require.Len(t, rows, 2+1+2, "hot V1 (2 engines), V0, V1 (2): %v", rows)
		flapping := 0
		for _, row := range rows {
			state := row["state"].(string)
			if !isFlaky[row["instance"].(string)] {
				require.Equal(t, "up", state, "%v", row)
				continue
			}
			require.Contains(t, []string{"flapping", "down", "stale"}, state, "%v", row)
			if state == "flapping" {
				flapping++
			}
		}
		if flapping == 3 {
			require.Equal(t, []string{"flapping", "flapping", "flapping", "up", "up"}, states(rows), "flapping ranks above up")
			return rows
		}
		require.True(t, time.Now().Before(deadline), "the flaky servers never all read flapping at once: %v", rows)
		time.Sleep(500 * time.Millisecond)
	}
}

func states(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = row["state"].(string)
	}
	return out
}
