package prom

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// StoreStatus is one Store API endpoint (sidecar, store gateway, ruler,
// receiver) as Thanos Query reports it on /api/v1/stores.
type StoreStatus struct {
	Name string // the endpoint's address, as the querier was given it
	Type string // the component: sidecar, store, rule, receive, query
	// LastError is the querier's last failure reaching the endpoint; ""
	// while it answers.
	LastError string
}

// storesAnswer is /api/v1/stores' body: endpoints by component type.
type storesAnswer struct {
	Status string `json:"status"`
	Data   map[string][]struct {
		Name      string  `json:"name"`
		LastError *string `json:"lastError"`
	} `json:"data"`
}

// Stores lists the endpoints behind a Thanos Query. Thanos drops an
// endpoint that fails its health check from the queried set within one
// check (5 s by default) and from then on answers without it, without a
// warning, so only this list says an answer is partial. ok is false when
// the server has no such list (Prometheus, VictoriaMetrics, Mimir answer
// 404 or an error page): that is not an error.
func (c *Client) Stores(ctx context.Context) (stores []StoreStatus, ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.raw.URL("/api/v1/stores", nil).String(), nil)
	if err != nil {
		return nil, false, classify("stores", err)
	}
	resp, body, err := c.raw.Do(ctx, req)
	if err != nil {
		return nil, false, classify("stores", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, nil
	}
	var a storesAnswer
	if json.Unmarshal(body, &a) != nil || a.Status != "success" {
		return nil, false, nil
	}
	return storeStatuses(a), true, nil
}

// storeStatuses flattens the answer, sorted by name so notices built from
// it read the same on every request.
func storeStatuses(a storesAnswer) []StoreStatus {
	var out []StoreStatus
	for typ, eps := range a.Data {
		for _, ep := range eps {
			s := StoreStatus{Name: ep.Name, Type: typ}
			if ep.LastError != nil {
				s.LastError = *ep.LastError
			}
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Type < out[j].Type
	})
	return out
}

// String names the endpoint for a notice.
func (s StoreStatus) String() string {
	if s.Type == "" {
		return s.Name
	}
	return fmt.Sprintf("%s (%s)", s.Name, s.Type)
}
