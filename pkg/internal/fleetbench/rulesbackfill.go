package fleetbench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// BackfillRules evaluates the shipped recording rules
// (promtest.RecordingRulesFile) over [start, end] against p with `promtool
// tsdb create-blocks-from rules`, each group at the phase a running
// Prometheus gives it, and restarts p with the recorded series (see
// promtest.Server.BackfillRules: p must run on its own data directory,
// with --web.enable-admin-api for the snapshot it restarts on). It logs
// how long that took and fails unless every one of the fleet's engines
// has a recorded series at the wall clock's now, where the plugin's rule
// discovery looks: end must lie past the time the caller starts querying
// (a gauge rule keeps recording for Prometheus' 5-minute look-back after
// the last raw sample).
func BackfillRules(t testing.TB, p *promtest.Server, start, end time.Time, engines int) {
	t.Helper()
	began := time.Now()
	p.BackfillRules(t, filepath.Join(grafanahost.RepoRoot(t), promtest.RecordingRulesFile), start, end)
	t.Logf("rule backfill: %s", time.Since(began).Round(time.Second))
	n := len(p.Query(t, `count by (instance, engine) (engine:vllm_num_requests_waiting:sum)`))
	if n != engines {
		t.Fatalf("recorded per-engine series visible in Prometheus now: %d, want %d (recorded until %s, now %s)",
			n, engines, end.UTC().Format(time.TimeOnly), time.Now().UTC().Format(time.TimeOnly))
	}
}
