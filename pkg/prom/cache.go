package prom

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/prometheus/common/model"
)

// DefaultCacheBytes bounds the memory one data-source instance keeps in
// finished answers: its result cache and its incremental-range store
// together (see Budget).
const DefaultCacheBytes = 64 << 20

// Result is one finished query: a matrix or a vector, and its warnings.
// Results are shared by every caller that asks for the same key, so they
// are read-only.
type Result struct {
	Matrix   Matrix
	Vector   model.Vector
	Warnings []string
}

// sizeBytes estimates what the result, kept in the cache, holds in
// memory (see resultBytes).
func (r Result) sizeBytes() int64 { return resultBytes(r) }

// Fetch runs a query; TTL says, once it has answered, how long its result
// may be served (0: not at all).
type Fetch func(ctx context.Context) (Result, error)

// CacheStats counts what the cache did, for tests and the bench.
type CacheStats struct {
	Fetches, Hits, Shared, Evictions int64
	Bytes                            int64
	Entries                          int
}

// Cache is one data-source instance's short-lived result cache with
// in-flight sharing: callers asking for the same key while it is being
// fetched wait for that one fetch, and finished results are served until
// their TTL passes. Memory is bounded: least recently used results go
// first (with those of the Increments sharing its Budget), and a result
// bigger than a quarter of the budget is never kept. Errors are never kept.
type Cache struct {
	budget *Budget
	now    func() time.Time

	mu      *sync.Mutex // the budget's
	entries map[string]*entry
	lru     *list.List // finished entries, most recently used first
	stats   CacheStats
}

type entry struct {
	key     string
	done    chan struct{}
	res     Result
	err     error
	expires time.Time
	size    int64
	elem    *list.Element
	charge  *charge
	waiters int
	cancel  context.CancelFunc
}

// NewCache returns an empty cache with a budget of its own of maxBytes
// (DefaultCacheBytes when maxBytes <= 0). now is the clock (time.Now when
// nil). Budget.NewCache makes one that shares a budget.
func NewCache(maxBytes int64, now func() time.Time) *Cache {
	return NewBudget(maxBytes).NewCache(now)
}

// Budget is the budget the cache charges.
func (c *Cache) Budget() *Budget { return c.budget }

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = c.lru.Len()
	return s
}

// Do returns the fresh result for key, or waits for the fetch of key in
// flight, or starts fetch. The fetch runs on its own context (it outlives
// any one caller) and is canceled only when every caller waiting for it
// has given up; each caller waits only as long as its own ctx allows.
func (c *Cache) Do(ctx context.Context, key string, fetch Fetch, ttl func(Result) time.Duration) (Result, error) {
	c.mu.Lock()
	e := c.lookup(key)
	if e != nil && e.elem != nil {
		c.stats.Hits++
		c.lru.MoveToFront(e.elem)
		c.budget.touch(e.charge)
		c.mu.Unlock()
		return e.res, nil
	}
	if e != nil {
		c.stats.Shared++
	} else {
		e = c.start(key, ctx, fetch, ttl)
	}
	e.waiters++
	c.mu.Unlock()
	return c.wait(ctx, e)
}

// lookup returns the live entry for key, dropping an expired one.
func (c *Cache) lookup(key string) *entry {
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	if e.elem != nil && !c.now().Before(e.expires) {
		c.remove(e)
		return nil
	}
	return e
}

// start registers an in-flight entry and runs its fetch. Called locked.
func (c *Cache) start(key string, ctx context.Context, fetch Fetch, ttl func(Result) time.Duration) *entry {
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &entry{key: key, done: make(chan struct{}), cancel: cancel}
	c.entries[key] = e
	c.stats.Fetches++
	go func() {
		defer cancel()
		res, err := fetch(fctx)
		c.finish(e, res, err, ttl)
	}()
	return e
}

// finish records the answer, keeps it if it may be served later, and
// wakes the waiters.
func (c *Cache) finish(e *entry, res Result, err error, ttl func(Result) time.Duration) {
	d := time.Duration(0)
	if err == nil {
		d = ttl(res)
	}
	var size int64
	if d > 0 {
		size = res.sizeBytes() // outside the lock: it walks every series
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.res, e.err = res, err
	close(e.done)
	if c.entries[e.key] != e {
		return // abandoned by every waiter
	}
	e.size = size
	if d <= 0 || !c.budget.fits(e.size) {
		delete(c.entries, e.key)
		return
	}
	e.expires = c.now().Add(d)
	e.elem = c.lru.PushFront(e)
	c.stats.Bytes += e.size
	c.dropExpired()
	e.charge = &charge{size: e.size, evict: func() {
		c.remove(e)
		c.stats.Evictions++
	}}
	c.budget.admit(e.charge)
}

// dropExpired forgets the results whose TTL has passed. Called locked.
func (c *Cache) dropExpired() {
	now := c.now()
	for el := c.lru.Back(); el != nil; {
		prev := el.Prev()
		if e := el.Value.(*entry); !now.Before(e.expires) {
			c.remove(e)
		}
		el = prev
	}
}

// remove forgets a finished entry and gives its bytes back to the budget.
// Called locked.
func (c *Cache) remove(e *entry) {
	c.lru.Remove(e.elem)
	e.elem = nil
	c.budget.release(e.charge)
	c.stats.Bytes -= e.size
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
}

// wait blocks until the entry's fetch answers or ctx ends. The last
// waiter to give up cancels the fetch and forgets it, so a later caller
// starts afresh instead of joining a canceled fetch.
func (c *Cache) wait(ctx context.Context, e *entry) (Result, error) {
	select {
	case <-e.done:
		c.mu.Lock()
		e.waiters--
		c.mu.Unlock()
		return e.res, e.err
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		e.waiters--
		if e.waiters == 0 && c.entries[e.key] == e && e.elem == nil {
			delete(c.entries, e.key)
			e.cancel()
		}
		return Result{}, classify("wait for a shared query", ctx.Err())
	}
}
