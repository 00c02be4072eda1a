package query

import (
	"context"
	"sync"
	"time"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// labelValuer is the part of a Prometheus client that lists a label's
// values among the series a selector matches (prom.Client has it). A
// client without it gets vLLM's default bounds.
type labelValuer interface {
	LabelValues(ctx context.Context, label, selector string, start, end time.Time) ([]string, error)
}

// maxBoundsEntries caps the bounds cache: one entry per family, selection
// and five-minute slot; past it the cache starts over.
const maxBoundsEntries = 512

// boundsCache keeps the le bounds each selection's series carry, for
// DetectionTTL: operators replace bucket lists at deploy time, not per query.
type boundsCache struct {
	mu      sync.Mutex
	entries map[string]boundsEntry
}

type boundsEntry struct {
	bounds  vllm.Bounds
	fetched time.Time
}

// Bounds returns the finite le bounds that the _bucket series selector
// matches carry between start and end, in both spellings Prometheus 2 and
// 3 store, cached per data-source instance. The range is widened to whole
// DetectionTTL slots so that a dashboard refreshing every few seconds asks
// once per slot. When the store cannot answer or holds no such series, it
// returns vLLM's defaults for key (Default set) and caches nothing.
func (d *Detector) Bounds(ctx context.Context, key vllm.SignalKey, selector string, start, end time.Time) vllm.Bounds {
	lv, ok := d.prom.(labelValuer)
	if !ok {
		return vllm.DefaultBounds(key)
	}
	from, to := start.Truncate(DetectionTTL), end.Truncate(DetectionTTL).Add(DetectionTTL)
	cacheKey := selector + "\x00" + from.String() + "\x00" + to.String()
	if b, ok := d.bounds.get(cacheKey, d.now()); ok {
		return b
	}
	les, err := lv.LabelValues(ctx, "le", selector, from, to)
	if err != nil {
		return vllm.DefaultBounds(key)
	}
	b := vllm.ParseBounds(les)
	if b.Empty() {
		return vllm.DefaultBounds(key)
	}
	d.bounds.put(cacheKey, b, d.now())
	return b
}

func (c *boundsCache) get(key string, now time.Time) (vllm.Bounds, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.Sub(e.fetched) >= DetectionTTL {
		return vllm.Bounds{}, false
	}
	return e.bounds, true
}

func (c *boundsCache) put(key string, b vllm.Bounds, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxBoundsEntries {
		c.entries = map[string]boundsEntry{}
	}
	c.entries[key] = boundsEntry{bounds: b, fetched: now}
}

// forget empties the cache (Invalidate: "Save & test" after a redeploy).
func (c *boundsCache) forget() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}
