package query

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Prometheus is what the executor needs from the client.
type Prometheus interface {
	Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error)
	QueryRange(ctx context.Context, expr string, r v1.Range) (model.Matrix, []string, error)
	MetricNames(ctx context.Context, selector string, start, end time.Time) ([]string, error)
}

// memo fetches each distinct (expression, range) once per request: panels
// often repeat a query under several RefIDs (and annotations repeat the
// panel's), and Prometheus should not pay for it twice.
type memo struct {
	prom  Prometheus
	mu    sync.Mutex
	calls map[string]*call
	// fetches counts real round trips, for tests.
	fetches int
}

type call struct {
	done     chan struct{}
	matrix   model.Matrix
	vector   model.Vector
	warnings []string
	err      error
}

func newMemo(p Prometheus) *memo { return &memo{prom: p, calls: map[string]*call{}} }

// get returns the call for key, and whether the caller must perform it.
func (m *memo) get(key string) (*call, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.calls[key]; ok {
		return c, false
	}
	c := &call{done: make(chan struct{})}
	m.calls[key] = c
	m.fetches++
	return c, true
}

func (m *memo) wait(ctx context.Context, c *call) error {
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rangeQuery runs a range query once per request.
func (m *memo) rangeQuery(ctx context.Context, expr string, r v1.Range) (model.Matrix, []string, error) {
	key := fmt.Sprintf("range\x00%s\x00%d\x00%d\x00%d", expr, r.Start.UnixMilli(), r.End.UnixMilli(), r.Step.Milliseconds())
	c, mine := m.get(key)
	if mine {
		c.matrix, c.warnings, c.err = m.prom.QueryRange(ctx, expr, r)
		close(c.done)
	} else if err := m.wait(ctx, c); err != nil {
		return nil, nil, err
	}
	return c.matrix, c.warnings, c.err
}

// instantQuery runs an instant query once per request.
func (m *memo) instantQuery(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	key := fmt.Sprintf("instant\x00%s\x00%d", expr, ts.UnixMilli())
	c, mine := m.get(key)
	if mine {
		c.vector, c.warnings, c.err = m.prom.Query(ctx, expr, ts)
		close(c.done)
	} else if err := m.wait(ctx, c); err != nil {
		return nil, nil, err
	}
	return c.vector, c.warnings, c.err
}
