package health

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// slowShare is the share of the scrape timeout above which a server's
// scrapes are named: past half the timeout, the next burst of load takes
// the scrape over it, and the server goes down in Prometheus.
const slowShare = 0.5

// flapWindow is how far back Save & test looks at the scrapes: 10m, and at
// least twenty scrapes, so one failed scrape at a long interval shows.
func flapWindow(setting time.Duration) time.Duration {
	return max(10*time.Minute, 20*setting)
}

// scrapeTrouble is one server whose scrapes flap or come near the timeout.
type scrapeTrouble struct {
	server  string
	changes float64 // how often up changed in the window; 0 when it did not flap
	slowest float64 // the slowest scrape in the window, seconds
	timeout float64 // the scrape timeout, seconds (stored or assumed)
}

// scrapeHealthNote warns about the vLLM servers whose scrapes failed
// between successes (up flapped) or took over half the scrape timeout in
// the window: their panels have gaps, or will under more load. A failed
// lookup says nothing: this is advice, never a failed test.
func scrapeHealthNote(ctx context.Context, p Prometheus, s models.Settings, now time.Time) string {
	b, window := builder(ctx, s), flapWindow(s.ScrapeInterval)
	vecs := map[string]model.Vector{}
	for _, sig := range b.HealthScrapeSignals(window) {
		vec, _, err := p.Query(ctx, sig.Expr, now)
		if err != nil {
			return ""
		}
		vecs[sig.Name] = vec
	}
	return scrapeTroubleNote(scrapeTroubles(b, vecs, models.AssumedScrapeTimeout(s.ScrapeInterval)), window)
}

// scrapeTroubles joins the answers by server: the flapping ones, and the
// ones whose slowest scrape took over slowShare of the timeout (stored, or
// assumed where Prometheus keeps no scrape_timeout_seconds), sorted by name.
func scrapeTroubles(b vllm.Builder, vecs map[string]model.Vector, assumed time.Duration) []scrapeTrouble {
	byServer := map[string]*scrapeTrouble{}
	get := func(m model.Metric) *scrapeTrouble {
		name := instanceOf(b, m)
		if byServer[name] == nil {
			byServer[name] = &scrapeTrouble{server: name, timeout: assumed.Seconds()}
		}
		return byServer[name]
	}
	for _, smp := range vecs[vllm.FleetScrapeTimeout] {
		if v := float64(smp.Value); v > 0 && !math.IsInf(v, 0) {
			get(smp.Metric).timeout = v
		}
	}
	for _, smp := range vecs[vllm.FleetUpChanges] {
		if v := float64(smp.Value); v >= vllm.FlapChanges {
			get(smp.Metric).changes = v
		}
	}
	for _, smp := range vecs[vllm.FleetScrapeDuration] {
		get(smp.Metric).slowest = float64(smp.Value)
	}
	var out []scrapeTrouble
	for _, tr := range byServer {
		if tr.changes > 0 || tr.slowest > slowShare*tr.timeout {
			out = append(out, *tr)
		}
	}
	slices.SortFunc(out, func(a, b scrapeTrouble) int { return strings.Compare(a.server, b.server) })
	return out
}

// scrapeTroubleNote is the health message's warning: the first few
// servers with what was seen of each, and the fix.
func scrapeTroubleNote(troubles []scrapeTrouble, window time.Duration) string {
	if len(troubles) == 0 {
		return ""
	}
	named := make([]string, len(troubles))
	for i, tr := range troubles {
		named[i] = tr.describe(window)
	}
	return fmt.Sprintf(". Warning: the scrapes of %s fail now and then or come near the scrape timeout: %s. "+
		"While a scrape fails the server is down in Prometheus and every panel has a gap: raise the scrape job's scrape_timeout "+
		"(at most its scrape_interval), scrape its metrics on a separate port or endpoint that load does not slow, or lower its load",
		plural(len(troubles), "vLLM server"), firstFew(named))
}

// describe says what was seen of one server's scrapes.
func (tr scrapeTrouble) describe(window time.Duration) string {
	var parts []string
	if tr.changes > 0 {
		parts = append(parts, fmt.Sprintf("up changed %g times in the last %s", tr.changes, interval.Compact(window)))
	}
	if tr.slowest > slowShare*tr.timeout {
		parts = append(parts, fmt.Sprintf("a scrape took %.3gs, %.0f%% of the %gs timeout", tr.slowest, 100*tr.slowest/tr.timeout, tr.timeout))
	}
	return tr.server + " (" + strings.Join(parts, "; ") + ")"
}
