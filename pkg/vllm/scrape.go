package vllm

import (
	"strconv"
	"time"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// Scrape health: Prometheus' own series about each scrape of a vLLM
// server's target (up, scrape_duration_seconds, and scrape_timeout_seconds
// where Prometheus stores it: Prometheus 3's extra_scrape_metrics, the
// extra-scrape-metrics feature flag of Prometheus 2.30 and later). They
// carry the target's labels, not vLLM's, so they are grouped by the
// server's identity labels and joined to the engines by server; the query
// filters (model, engine) do not apply to them, the data source's scope
// does.

// Names of the fleet table's scrape-health expressions (SignalExpr.Name).
const (
	// FleetUpChanges is how many times the server's up changed in the
	// table's look-back: two or more on a server that is up now is a failed
	// scrape between successes (the flapping state).
	FleetUpChanges = "up_changes"
	// FleetScrapeDuration is how long the server's last scrape took, in
	// seconds (a scrape that timed out reads about the timeout).
	FleetScrapeDuration = "scrape_duration"
	// FleetScrapeTimeout is the server's scrape timeout in seconds, where
	// Prometheus stores it; the data source's assumed timeout otherwise.
	FleetScrapeTimeout = "scrape_timeout"
)

// FlapChanges is how many changes of up in a window make a server that is
// up now flapping: down at least once between two successful scrapes.
const FlapChanges = 2

// FleetScrapeSignals are the fleet table's scrape-health expressions, one
// sample per server: the changes of up over lookback (the table's range),
// and the last scrape's duration and timeout.
func (b Builder) FleetScrapeSignals(lookback string) []SignalExpr {
	id := b.IdentityLabels()
	return []SignalExpr{
		{FleetUpChanges, agg("max", id, b.joinScoped("changes("+b.ScopedSelector("up")+"["+lookback+"])"))},
		{FleetScrapeDuration, agg("max", id, b.joinedSelector("scrape_duration_seconds"))},
		{FleetScrapeTimeout, agg("max", id, b.joinedSelector("scrape_timeout_seconds"))},
	}
}

// HealthScrapeSignals are the health check's scrape-health expressions
// over window, one sample per vLLM server (a target that exported vLLM's
// running gauge in the window: up covers every target of the store, node
// exporters and Prometheus itself too): the servers whose up changed at
// least FlapChanges times (value: the changes), every server's slowest
// scrape in seconds, and the scrape timeout where Prometheus stores it.
// The slowest scrape, not the last: a server whose scrapes sometimes come
// near the timeout is the one that goes down under the next burst.
func (b Builder) HealthScrapeSignals(window time.Duration) []SignalExpr {
	id, w := b.IdentityLabels(), interval.PromDuration(window)
	vllmServers := " and " + onLabels(id) + " " + agg("group", id, b.lastOverTime(Running, models.Filters{}, w))
	return []SignalExpr{
		{FleetUpChanges, agg("max", id, b.joinScoped("changes("+b.ScopedSelector("up")+"["+w+"])")) + " >= " + strconv.Itoa(FlapChanges) + vllmServers},
		{FleetScrapeDuration, agg("max", id, b.joinScoped("max_over_time("+b.ScopedSelector("scrape_duration_seconds")+"["+w+"])")) + vllmServers},
		{FleetScrapeTimeout, agg("max", id, b.joinedSelector("scrape_timeout_seconds"))},
	}
}
