package prom

import (
	"container/list"
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// DefaultOverlap is how far back from the moment of a fetch a range answer
// may still change: samples arrive up to a scrape late (more behind remote
// write), so every step later than this is asked for again. Grafana's own
// Prometheus source uses the same default for its incremental queries.
const DefaultOverlap = 10 * time.Minute

// RangeFetch asks Prometheus for one range on the caller's step.
type RangeFetch func(ctx context.Context, start, end time.Time) (Matrix, []string, error)

// IncrementStats counts what Increments did, for tests and the bench.
type IncrementStats struct {
	// Full fetches had no usable earlier answer; Tails asked only for the
	// steps after the final part of one; Reused answered without asking.
	Full, Tails, Reused, Evictions int64
	Bytes                          int64
	Bases                          int
}

// Increments keeps, per range query (expression and step), the latest
// answer and the moment it was fetched, so the next range on the same step
// grid (a dashboard ending "now", refreshed) asks Prometheus only for the
// steps that could have changed since: a PromQL range query evaluates each
// step on its own, so the steps before the overlap are final and the answer
// is the same as a full fetch. Memory is bounded by its Budget, which a
// Cache may share: least recently used entries of either go first and a
// base bigger than a quarter of the budget is not kept.
type Increments struct {
	budget  *Budget
	overlap time.Duration
	now     func() time.Time

	mu    *sync.Mutex // the budget's
	bases map[string]*base
	lru   *list.List
	stats IncrementStats
}

// base is the latest answer for one key.
type base struct {
	key        string
	start, end time.Time
	final      time.Time // steps at or before final no longer change
	mat        Matrix
	size       int64
	elem       *list.Element
	charge     *charge
}

// NewIncrements returns an empty store with a budget of its own:
// overlap <= 0 means DefaultOverlap, maxBytes <= 0 DefaultCacheBytes, now
// nil time.Now. Budget.NewIncrements makes one that shares a budget.
func NewIncrements(overlap time.Duration, maxBytes int64, now func() time.Time) *Increments {
	return NewBudget(maxBytes).NewIncrements(overlap, now)
}

// Stats returns a snapshot of the counters.
func (inc *Increments) Stats() IncrementStats {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	s := inc.stats
	s.Bases = inc.lru.Len()
	return s
}

// Incremental reports whether expr may be answered piecewise: every step
// of a range query is evaluated on its own except under the @ modifier's
// start() and end(), which name the range's own ends (any @ is refused,
// which also refuses a label value that holds one: safe, only slower).
func Incremental(expr string) bool {
	return !strings.Contains(expr, "@")
}

// Query answers expr over r, asking fetch only for the steps after the
// final part of the last answer kept under key (which must name the
// expression and the step). An error keeps the old base.
func (inc *Increments) Query(ctx context.Context, key string, r v1.Range, fetch RangeFetch) (Matrix, []string, error) {
	b := inc.get(key)
	from := r.Start
	if b.covers(r) {
		from = b.tailStart(r)
	}
	if from.After(r.End) {
		inc.count(func(s *IncrementStats) { s.Reused++ })
		return b.mat.Between(r.Start, r.End), nil, nil
	}
	fetchedAt := inc.now()
	fresh, warn, err := fetch(ctx, from, r.End)
	if err != nil {
		return nil, nil, err
	}
	out := fresh
	if from.After(r.Start) {
		out = Splice(b.mat.Between(r.Start, from.Add(-time.Nanosecond)), fresh)
		inc.count(func(s *IncrementStats) { s.Tails++ })
	} else {
		inc.count(func(s *IncrementStats) { s.Full++ })
	}
	if len(warn) > 0 {
		// A warning may mean a partial answer (a Thanos store that was
		// down): its steps are not final, so it is not kept, and the next
		// range is fetched whole.
		inc.drop(key)
		return out, warn, nil
	}
	inc.put(&base{key: key, start: r.Start, end: r.End, final: fetchedAt.Add(-inc.overlap), mat: out})
	return out, nil, nil
}

// drop forgets key's base.
func (inc *Increments) drop(key string) {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	if b := inc.bases[key]; b != nil {
		inc.remove(b)
	}
}

// covers reports whether b holds final steps at the start of r on r's grid.
func (b *base) covers(r v1.Range) bool {
	if b == nil || r.Step <= 0 || r.Start.Before(b.start) {
		return false
	}
	if r.Start.Sub(b.start)%r.Step != 0 {
		return false
	}
	return !r.Start.After(b.lastFinal())
}

// lastFinal is the last instant whose step b holds and will not change.
func (b *base) lastFinal() time.Time {
	if b.end.Before(b.final) {
		return b.end
	}
	return b.final
}

// tailStart is the first step of r's grid after b's final part.
func (b *base) tailStart(r v1.Range) time.Time {
	k := b.lastFinal().Sub(r.Start)/r.Step + 1
	return r.Start.Add(k * r.Step)
}

func (inc *Increments) count(f func(*IncrementStats)) {
	inc.mu.Lock()
	f(&inc.stats)
	inc.mu.Unlock()
}

func (inc *Increments) get(key string) *base {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	b := inc.bases[key]
	if b != nil {
		inc.lru.MoveToFront(b.elem)
		inc.budget.touch(b.charge)
	}
	return b
}

// put keeps b as key's base, replacing the old one, within the bound.
func (inc *Increments) put(b *base) {
	b.size = b.mat.SizeBytes()
	inc.mu.Lock()
	defer inc.mu.Unlock()
	if old := inc.bases[b.key]; old != nil {
		inc.remove(old)
	}
	if !inc.budget.fits(b.size) {
		return
	}
	b.elem = inc.lru.PushFront(b)
	inc.bases[b.key] = b
	inc.stats.Bytes += b.size
	b.charge = &charge{size: b.size, evict: func() {
		inc.remove(b)
		inc.stats.Evictions++
	}}
	inc.budget.admit(b.charge)
}

// remove forgets b and gives its bytes back to the budget. Called locked.
func (inc *Increments) remove(b *base) {
	inc.lru.Remove(b.elem)
	delete(inc.bases, b.key)
	inc.budget.release(b.charge)
	inc.stats.Bytes -= b.size
}

// Splice joins an earlier matrix and a later one whose points all come
// after it, series by series (by their labels): a series in only one of
// them keeps its own points. Series come out sorted by their labels, as
// Prometheus sorts a range query's answer.
func Splice(early, late Matrix) Matrix {
	byKey := make(map[string]*Series, len(early)+len(late))
	keys := make([]string, 0, len(early)+len(late))
	for _, part := range []Matrix{early, late} {
		for _, s := range part {
			k := labelKey(s.Labels)
			prev, ok := byKey[k]
			if !ok {
				byKey[k] = s
				keys = append(keys, k)
				continue
			}
			byKey[k] = joined(prev, s)
		}
	}
	sort.Strings(keys)
	out := make(Matrix, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// joined is a new series holding a's points, then b's.
func joined(a, b *Series) *Series {
	n := len(a.Times) + len(b.Times)
	s := &Series{Labels: a.Labels, Times: make([]time.Time, 0, n), Values: make([]float64, 0, n)}
	s.Times = append(append(s.Times, a.Times...), b.Times...)
	s.Values = append(append(s.Values, a.Values...), b.Values...)
	return s
}

// labelKey is a series' identity: its labels, sorted, as one string.
func labelKey(l map[string]string) string {
	names := make([]string, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}
