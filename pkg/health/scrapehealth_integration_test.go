//go:build !mutation

package health_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestCheckNamesFlappingAndSlowScrapes: real Prometheus 2 (2s scrapes, so
// a 2s timeout) scrapes a mixed fleet through proxies: one vLLM server
// answers 500 on every third scrape (it flaps), one takes 1.2s on every
// scrape (60% of the timeout, never over it), one is steady; a target that
// is no vLLM server flaps too. Save & test stays OK and its warning names
// the two troubled vLLM servers with what was seen of each and the fix,
// and neither the steady server nor the non-vLLM target.
func TestCheckNamesFlappingAndSlowScrapes(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.MixedFleet(36))
	failing := promtest.FlakyTarget(t, env.Endpoints[0].Addr, promtest.Flaky{Status: http.StatusInternalServerError, Every: 3})
	slow := promtest.FlakyTarget(t, env.Endpoints[1].Addr, promtest.Flaky{Delay: 1200 * time.Millisecond})
	steady := env.Endpoints[2].Addr
	other := promtest.FlakyTarget(t, promtest.ServeExposition(t, []byte("# TYPE other_up gauge\nother_up 1\n")),
		promtest.Flaky{Status: http.StatusInternalServerError, Every: 2})
	srv := promtest.Start(t, promtest.Options{Targets: []string{failing, slow, steady, other}, ScrapeInterval: 2 * time.Second})
	srv.WaitForSeries(t, `changes(up[1m]) >= 2`, 2, 120*time.Second)
	srv.WaitForSeries(t, `max_over_time(scrape_duration_seconds[1m]) > 1`, 1, 60*time.Second)

	res := check(t, srv.URL, `{"scrapeInterval":"2s"}`)
	require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
	t.Log(res.Message)
	require.Contains(t, res.Message, "Warning: the scrapes of 2 vLLM servers fail now and then or come near the scrape timeout: ")
	require.Regexp(t, regexp.QuoteMeta(failing)+` \(up changed \d+ times in the last 10m\)`, res.Message)
	// 1.2s of 2s; on a loaded machine a scrape can run past the timeout
	// (then it flapped too, and took the 2s).
	require.Regexp(t, regexp.QuoteMeta(slow)+` \((up changed \d+ times in the last 10m; )?a scrape took (1\.2\d?|1\.[3-9]\d?|2)s, (6\d|[7-9]\d|100)% of the 2s timeout\)`, res.Message)
	require.Contains(t, res.Message, "raise the scrape job's scrape_timeout")
	require.NotContains(t, res.Message, steady)
	require.NotContains(t, res.Message, other)
}
