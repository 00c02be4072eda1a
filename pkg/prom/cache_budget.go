package prom

import (
	"container/list"
	"sync"
	"time"
)

// Budget is the memory one data-source instance may keep in finished
// answers, shared by its result Cache and its Increments: the sum of what
// both keep never exceeds it. Both stores charge every entry they keep to
// the budget, and when a new entry takes it over the bound the least
// recently used entries go first, whichever store holds them, so the
// store in use keeps the memory an idle one no longer needs.
//
// The budget's lock is also the lock of every store that charges it: an
// eviction forgets an entry in the other store under the same lock, so the
// bound is exact after every insert, and no lock order can deadlock.
type Budget struct {
	max int64

	mu   sync.Mutex // guards the budget and the stores that charge it
	used int64
	lru  *list.List // *charge, most recently used first, across stores
}

// charge is one kept entry's share of the budget.
type charge struct {
	size  int64
	elem  *list.Element
	evict func() // forgets the entry in its store and releases it; called locked
}

// NewBudget returns an empty budget of maxBytes (DefaultCacheBytes when
// maxBytes <= 0).
func NewBudget(maxBytes int64) *Budget {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Budget{max: maxBytes, lru: list.New()}
}

// Max is the bound in bytes.
func (b *Budget) Max() int64 { return b.max }

// Used is what the entries kept under the budget are estimated to hold.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// NewCache returns an empty result cache charged to b. now is the clock
// (time.Now when nil).
func (b *Budget) NewCache(now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{budget: b, mu: &b.mu, now: now, entries: map[string]*entry{}, lru: list.New()}
}

// NewIncrements returns an empty store of range answers charged to b:
// overlap <= 0 means DefaultOverlap, now nil time.Now.
func (b *Budget) NewIncrements(overlap time.Duration, now func() time.Time) *Increments {
	if overlap <= 0 {
		overlap = DefaultOverlap
	}
	if now == nil {
		now = time.Now
	}
	return &Increments{budget: b, mu: &b.mu, overlap: overlap, now: now, bases: map[string]*base{}, lru: list.New()}
}

// fits reports whether an entry of size may be kept at all: one bigger
// than a quarter of the budget would push out most of the rest.
func (b *Budget) fits(size int64) bool { return size <= b.max/4 }

// admit charges c as the most recently used entry, then evicts the least
// recently used entries of any store until the budget holds. Called locked.
func (b *Budget) admit(c *charge) {
	c.elem = b.lru.PushFront(c)
	b.used += c.size
	for b.used > b.max {
		back := b.lru.Back()
		if back == nil || back == c.elem {
			return // c alone: fits keeps it within the bound
		}
		back.Value.(*charge).evict()
	}
}

// touch marks c as just used. Called locked.
func (b *Budget) touch(c *charge) {
	if c != nil && c.elem != nil {
		b.lru.MoveToFront(c.elem)
	}
}

// release gives c's bytes back. Called locked; releasing twice is harmless.
func (b *Budget) release(c *charge) {
	if c == nil || c.elem == nil {
		return
	}
	b.lru.Remove(c.elem)
	c.elem = nil
	b.used -= c.size
}
