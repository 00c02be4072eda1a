package query

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// storeLister is what the Prometheus client offers when the server may be
// a Thanos Query (prom.Client.Stores).
type storeLister interface {
	Stores(ctx context.Context) ([]prom.StoreStatus, bool, error)
}

const (
	// storeRecheck is how long a server without a store list (anything
	// but Thanos Query) is left unasked: one 404 per ten minutes.
	storeRecheck = 10 * time.Minute
	// storeCheckTimeout bounds the one extra call per request; an answer
	// must not wait on it.
	storeCheckTimeout = 2 * time.Second
)

// storeCheck remembers that the server has no store list.
type storeCheck struct {
	mu          sync.Mutex
	noListUntil time.Time
}

// downStores asks a Thanos Query which of its stores it cannot reach. It is
// asked after the request's queries ran: a store that died before a query
// either failed inside it (Thanos' own warning names it) or was already
// marked down, and then this list names it; asked before, a store dying in
// between would be left out silently.
func (e *Executor) downStores(ctx context.Context) []prom.StoreStatus {
	l, ok := e.Prom.(storeLister)
	if !ok || !e.stores.due(e.clock()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	all, isList, err := l.Stores(ctx)
	if err != nil {
		// The kind only: an error page may echo the request (its credentials).
		backend.Logger.Debug("thanos store list unavailable", "kind", string(prom.KindOf(err)))
		return nil
	}
	if !isList {
		e.stores.noList(e.clock())
		return nil
	}
	var down []prom.StoreStatus
	for _, s := range all {
		if s.LastError != "" {
			down = append(down, s)
		}
	}
	return down
}

func (c *storeCheck) due(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !now.Before(c.noListUntil)
}

func (c *storeCheck) noList(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noListUntil = now.Add(storeRecheck)
}

// addStoreNotices warns every answered query of a request that the stores
// in down are missing from it, unless a notice (Thanos' own partial
// response warning) names the store already.
func addStoreNotices(resp *backend.QueryDataResponse, down []prom.StoreStatus) {
	for ref, r := range resp.Responses {
		if r.Error != nil || len(r.Frames) == 0 {
			continue
		}
		r.Frames = frames.AppendNotices(r.Frames, storeNotices(r.Frames[0].Meta, down))
		resp.Responses[ref] = r
	}
}

// storeNotices is one warning per down store not yet named in meta.
func storeNotices(meta *data.FrameMeta, down []prom.StoreStatus) []data.Notice {
	var said []string
	if meta != nil {
		for _, n := range meta.Notices {
			said = append(said, n.Text)
		}
	}
	text := strings.Join(said, "\n")
	var out []data.Notice
	for _, s := range down {
		if strings.Contains(text, s.Name) {
			continue
		}
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
			"Thanos Query cannot reach store %s (%s) and answers without it: the series it holds are missing here.", s, s.LastError)})
	}
	return out
}
