package query

import (
	"time"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// MaxCacheTTL bounds how long a finished range's answer is kept.
const MaxCacheTTL = 5 * time.Minute

// CacheTTL is how long an answer for a range (or instant) ending at end,
// fetched at fetched, may be served to other requests.
//
// Samples stamped at or before end keep arriving until about one scrape
// after it, so while the fetch is within two scrape intervals of end the
// answer is kept for one scrape interval only: a range that ends now never
// shows data older than the scrape interval. Later the range is closed and
// its answer no longer changes; it is kept for a step (at most
// MaxCacheTTL), by which time a dashboard ending "now" has moved on to the
// next step-aligned range anyway.
func CacheTTL(end, fetched time.Time, scrape, step time.Duration) time.Duration {
	if scrape <= 0 {
		return 0
	}
	if fetched.Sub(end) < 2*scrape {
		return scrape
	}
	return min(max(step, scrape), MaxCacheTTL)
}

// cacheTTL binds CacheTTL to this executor's clock and scrape interval.
func (e *Executor) cacheTTL(end time.Time, step time.Duration) func(prom.Result) time.Duration {
	return func(prom.Result) time.Duration {
		return CacheTTL(end, e.clock(), e.Settings.ScrapeInterval, step)
	}
}

// sharedCache is the instance's result cache, made on first use: one per
// Executor, and the plugin makes one Executor per data-source instance, so
// new settings (a new instance) never see the old instance's answers.
func (e *Executor) sharedCache() *prom.Cache {
	e.cacheOnce.Do(func() {
		if e.Cache == nil {
			e.Cache = prom.NewCache(e.CacheBytes, e.Now)
		}
	})
	return e.Cache
}

// increments is the instance's store of earlier range answers, made on
// first use like the cache; nil when the settings turn it off. It is
// charged to the cache's budget, so the two together keep at most
// CacheBytes.
func (e *Executor) increments() *prom.Increments {
	e.incrOnce.Do(func() {
		if e.Increments == nil && e.Settings.Incremental {
			e.Increments = e.sharedCache().Budget().NewIncrements(e.Settings.IncrementalOverlap, e.Now)
		}
	})
	return e.Increments
}

func (e *Executor) clock() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
