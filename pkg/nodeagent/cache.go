package nodeagent

import (
	"context"
	"sync"
	"time"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// DefaultCacheTTL is how long one reading of the GPUs is served.
const DefaultCacheTTL = time.Second

// collectTimeout bounds one reading of the source, which runs detached from
// the request that started it so one impatient client cannot fail the rest.
const collectTimeout = 10 * time.Second

// Cached serves one reading of src for ttl. Concurrent callers that find the
// reading stale share a single call to src (singleflight), so a burst of
// requests reaches the driver once.
type Cached struct {
	src Source
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	gpus     []agentapi.GPU
	err      error
	at       time.Time
	valid    bool
	inflight *flight
}

type flight struct {
	done chan struct{}
	gpus []agentapi.GPU
	err  error
}

// NewCached wraps src; ttl <= 0 disables caching but still merges
// concurrent calls.
func NewCached(src Source, ttl time.Duration) *Cached {
	return &Cached{src: src, ttl: ttl, now: time.Now}
}

// GPUs implements Source. Callers must not modify the returned slice.
func (c *Cached) GPUs(ctx context.Context) ([]agentapi.GPU, error) {
	c.mu.Lock()
	if c.valid && c.now().Sub(c.at) < c.ttl {
		gpus, err := c.gpus, c.err
		c.mu.Unlock()
		return gpus, err
	}
	f := c.inflight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		c.inflight = f
		go c.collect(f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.gpus, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cached) collect(f *flight) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	f.gpus, f.err = c.src.GPUs(ctx)
	c.mu.Lock()
	c.gpus, c.err, c.at, c.valid = f.gpus, f.err, c.now(), true
	c.inflight = nil
	c.mu.Unlock()
	close(f.done)
}
