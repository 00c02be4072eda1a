package promtest

import (
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// ReplayRules evaluates the rule file over [start, end] with vmalert's
// replay mode against this VictoriaMetrics and writes the recorded series
// back into it (range queries stepping by each group's interval from
// start: evaluations on multiples of the interval), then
// flushes them so queries see them. It is VictoriaMetrics' counterpart of
// BackfillRules.
func (s *Server) ReplayRules(t testing.TB, ruleFile string, start, end time.Time) {
	t.Helper()
	if s.Backend != VictoriaMetrics {
		t.Fatalf("ReplayRules needs VictoriaMetrics, not %s", s.Backend)
	}
	bin := lookPath(t, "VMALERT_BIN", "vmalert", "apt-get install -y victoria-metrics")
	cmd := exec.Command(bin, "-rule="+ruleFile, "-datasource.url="+s.URL, "-remoteWrite.url="+s.URL,
		"-replay.timeFrom="+start.UTC().Format(time.RFC3339), "-replay.timeTo="+end.UTC().Format(time.RFC3339),
		// Step each group's range query by its interval (the default, 5m,
		// leaves one sample per 5 minutes).
		"-datasource.queryStep=0s",
		// No rule reads another's output, so nothing needs to wait for writes.
		"-replay.rulesDelay=0s", "-replay.disableProgressBar", "-loggerLevel=WARN",
		"-httpListenAddr="+freeAddr(t))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vmalert replay: %v\n%s", err, b)
	}
	resp, err := http.Get(s.URL + "/internal/force_flush")
	if err != nil {
		t.Fatalf("force_flush: %v", err)
	}
	_ = resp.Body.Close()
}
