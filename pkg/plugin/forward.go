package plugin

import (
	"container/list"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// maxIdentities bounds how many users' caches one instance keeps when it
// forwards identities; the least recently seen user's go first. OAuth
// access tokens rotate (about hourly), so a user moves to a new scope
// after each refresh and the old one ages out here.
const maxIdentities = 64

// forwardingOf reads the data source's "Forward OAuth identity"
// (oauthPassThru) and "Allowed cookies" (keepCookies) settings. Bad JSON
// forwards nothing; ParseSettings reports it.
func forwardingOf(s backend.DataSourceInstanceSettings) prom.Forwarding {
	var js struct {
		OAuthPassThru bool     `json:"oauthPassThru"`
		KeepCookies   []string `json:"keepCookies"`
	}
	if err := json.Unmarshal(s.JSONData, &js); err != nil {
		return prom.Forwarding{}
	}
	f := prom.Forwarding{OAuth: js.OAuthPassThru}
	for _, c := range js.KeepCookies {
		if c = strings.TrimSpace(c); c != "" {
			f.Cookies = append(f.Cookies, c)
		}
	}
	return f
}

// scope is what one identity's requests share: the profile resolver and
// the executor, with every cache they hold (results, incremental ranges,
// name detection, rule discovery, store checks).
type scope struct {
	profiles *query.Profiles
	executor *query.Executor
}

// scopes keeps one scope per forwarded identity. With forwarding on,
// Prometheus (or the proxy in front of it) may answer each user
// differently, so no answer may cross identities. Partitioning the whole
// instance state by identity, rather than keying each cache, covers every
// cache the executor has or will grow, and keeps in-flight sharing among
// one user's panels, which turning the caches off would lose. The result
// caches of all scopes charge one budget, so memory stays bounded however
// many users there are. Without forwarding there is one scope, keyed "".
type scopes struct {
	newScope func(shared *prom.Budget) *scope
	budget   *prom.Budget

	mu    sync.Mutex
	byKey map[string]*list.Element
	lru   *list.List // of *scopeEntry, most recently used first
}

type scopeEntry struct {
	key   string
	scope *scope
}

func newScopes(newScope func(*prom.Budget) *scope) *scopes {
	return &scopes{newScope: newScope, budget: prom.NewBudget(0), byKey: map[string]*list.Element{}, lru: list.New()}
}

// get returns the scope of identity key, making it on first use.
func (s *scopes) get(key string) *scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		s.lru.MoveToFront(el)
		return el.Value.(*scopeEntry).scope
	}
	sc := s.newScope(s.budget)
	s.byKey[key] = s.lru.PushFront(&scopeEntry{key: key, scope: sc})
	for s.lru.Len() > maxIdentities {
		old := s.lru.Back()
		s.lru.Remove(old)
		delete(s.byKey, old.Value.(*scopeEntry).key)
	}
	return sc
}

// user is what the plugin knows of the caller of one request: the context
// that carries its forwarded headers to Prometheus, its scope, and a
// redactor that also hides those headers' values.
type user struct {
	ctx context.Context
	// key names the forwarded identity ("" without forwarding).
	key    string
	scope  *scope
	redact redactor
}

// userOf picks the request's forwarded headers (none unless the settings
// forward them) and the scope of their identity.
func (d *Datasource) userOf(ctx context.Context, h http.Header) user {
	fwd := d.forwarding.Headers(h)
	key := prom.IdentityKey(fwd)
	return user{ctx: prom.WithForwarded(ctx, fwd), key: key, scope: d.scopes.get(key), redact: d.redact.with(fwd)}
}
