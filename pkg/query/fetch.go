package query

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/prom"
)

// Prometheus is what the executor needs from the client.
type Prometheus interface {
	Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error)
	QueryRange(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error)
	MetricNames(ctx context.Context, selector string, start, end time.Time) ([]string, error)
}

// memo fetches each distinct (expression, range) once per request: panels
// often repeat a query under several RefIDs (and annotations repeat the
// panel's), and Prometheus should not pay for it twice. With a shared
// cache it asks that first, so requests of other users share the answer
// too; alert queries have none and always reach Prometheus.
type memo struct {
	prom   Prometheus
	shared *prom.Cache
	// incr, with shared, answers a range from the final part of the last
	// answer for the same expression and step plus a fetch of the rest.
	incr  *prom.Increments
	ttl   func(end time.Time, step time.Duration) func(prom.Result) time.Duration
	mu    sync.Mutex
	calls map[string]*call
}

type call struct {
	done chan struct{}
	res  prom.Result
	err  error
}

func newMemo(p Prometheus, shared *prom.Cache, incr *prom.Increments, ttl func(time.Time, time.Duration) func(prom.Result) time.Duration) *memo {
	return &memo{prom: p, shared: shared, incr: incr, ttl: ttl, calls: map[string]*call{}}
}

// get returns the call for key, and whether the caller must perform it.
func (m *memo) get(key string) (*call, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.calls[key]; ok {
		return c, false
	}
	c := &call{done: make(chan struct{})}
	m.calls[key] = c
	return c, true
}

// do runs fetch once per request for key, through the shared cache when
// there is one.
func (m *memo) do(ctx context.Context, key string, end time.Time, step time.Duration, fetch prom.Fetch) (prom.Result, error) {
	c, mine := m.get(key)
	if !mine {
		select {
		case <-c.done:
			return c.res, c.err
		case <-ctx.Done():
			return prom.Result{}, ctx.Err()
		}
	}
	fetch = recovered(fetch)
	if m.shared != nil {
		c.res, c.err = m.shared.Do(ctx, key, fetch, m.ttl(end, step))
	} else {
		c.res, c.err = fetch(ctx)
	}
	close(c.done)
	return c.res, c.err
}

// recovered turns a panic inside fetch into its error: the shared cache
// runs fetches on their own goroutines, where the executor's per-query
// recovery cannot reach, and a panic there would end the plugin process.
func recovered(fetch prom.Fetch) prom.Fetch {
	return func(ctx context.Context) (res prom.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = newPanicError(p)
			}
		}()
		return fetch(ctx)
	}
}

// rangeQuery runs a range query once per request (and, with the shared
// cache, about once per scrape across requests).
func (m *memo) rangeQuery(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	key := fmt.Sprintf("range\x00%s\x00%d\x00%d\x00%d", expr, r.Start.UnixMilli(), r.End.UnixMilli(), r.Step.Milliseconds())
	res, err := m.do(ctx, key, r.End, r.Step, func(ctx context.Context) (prom.Result, error) {
		mat, warn, err := m.fetchRange(ctx, expr, r)
		return prom.Result{Matrix: mat, Warnings: warn}, err
	})
	return res.Matrix, res.Warnings, err
}

// fetchRange asks Prometheus for r, or only for the steps of r that the
// last answer for expr on this step does not hold final.
func (m *memo) fetchRange(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	if m.incr == nil || m.shared == nil || !prom.Incremental(expr) {
		return m.prom.QueryRange(ctx, expr, r)
	}
	key := fmt.Sprintf("%s\x00%d", expr, r.Step.Milliseconds())
	return m.incr.Query(ctx, key, r, func(ctx context.Context, start, end time.Time) (prom.Matrix, []string, error) {
		return m.prom.QueryRange(ctx, expr, v1.Range{Start: start, End: end, Step: r.Step})
	})
}

// instantQuery runs an instant query once per request; step is the
// panel's, which bounds how long a shared answer stays fresh.
func (m *memo) instantQuery(ctx context.Context, expr string, ts time.Time, step time.Duration) (model.Vector, []string, error) {
	key := fmt.Sprintf("instant\x00%s\x00%d", expr, ts.UnixMilli())
	res, err := m.do(ctx, key, ts, step, func(ctx context.Context) (prom.Result, error) {
		vec, warn, err := m.prom.Query(ctx, expr, ts)
		return prom.Result{Vector: vec, Warnings: warn}, err
	})
	return res.Vector, res.Warnings, err
}
