// Package plugin wires the data source together: it creates instances from
// Grafana's settings and routes QueryData, CheckHealth and CallResource to
// the packages that do the work. It holds no query, PromQL or frame logic.
package plugin

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/live"
	"github.com/inferops/vllm-datasource/pkg/memlimit"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// ID is the plugin id Grafana knows this data source by.
const ID = "inferops-vllm-datasource"

var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ backend.CallResourceHandler   = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// Datasource is one configured instance of the data source.
type Datasource struct {
	settings models.Settings
	// settingsErr is kept rather than failing instance creation so that
	// "Save & test" and every query can show which field is wrong.
	settingsErr error
	prom        *prom.Client
	agents      *agentapi.Client
	// forwarding is what of the signed-in user's identity goes on to
	// Prometheus; scopes keeps each forwarded identity's caches apart.
	forwarding prom.Forwarding
	scopes     *scopes
	now        func() time.Time
	life       *lifecycle
	redact     redactor
	// hub runs the instance's live channels (stream.go).
	hub live.Hub
	// untrack ends the instance's count in the process's memory limit
	// (pkg/memlimit.Track), which makes room for each live instance's
	// cache.
	untrack func()
}

// NewDatasource is the instance factory Grafana's SDK calls when a data
// source is created or its settings change.
func NewDatasource(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	ds := &Datasource{now: time.Now, life: newLifecycle(), redact: newRedactor(s), forwarding: forwardingOf(s), untrack: memlimit.Track()}
	ds.settings, ds.settingsErr = models.ParseSettings(models.Instance{URL: s.URL, JSONData: s.JSONData, DecryptedSecureJSONData: s.DecryptedSecureJSONData})
	if ds.settingsErr != nil {
		return ds, nil
	}
	hopts, err := httpOptions(ctx, s)
	if err != nil {
		ds.settingsErr = err
		return ds, nil
	}
	// The plugin forwards the user's identity itself (userOf), filtered
	// and keyed for the caches; the SDK's forwarding would add every
	// header Grafana sends, unfiltered and unseen by the cache keys.
	hopts.ForwardHTTPHeaders = false
	ds.prom, ds.settingsErr = prom.New(prom.Options{URL: ds.settings.URL, HTTP: hopts, Timeout: ds.settings.QueryTimeout, MaxConcurrent: ds.settings.MaxConcurrentQueries})
	if ds.settingsErr != nil {
		return ds, nil
	}
	ds.agents, ds.settingsErr = agentapi.NewClient(agentapi.Options{Timeout: ds.settings.Agents.Timeout, Token: ds.settings.Agents.Token})
	if ds.settingsErr != nil {
		ds.agents = nil
		return ds, nil
	}
	ds.scopes = newScopes(ds.newScope)
	return ds, nil
}

// httpOptions reads Grafana's standard HTTP settings of s (auth, headers,
// TLS) with the SDK's parser; the plugin's own settings are pkg/models'.
func httpOptions(ctx context.Context, s backend.DataSourceInstanceSettings) (httpclient.Options, error) {
	if len(s.JSONData) == 0 {
		// The SDK's HTTP settings parser needs an object, even an empty one.
		s.JSONData = []byte("{}")
	}
	o, err := s.HTTPClientOptions(ctx)
	if err != nil {
		return httpclient.Options{}, fmt.Errorf("%w: HTTP settings: %v", models.ErrInvalidSettings, err)
	}
	return o, nil
}

// newScope makes the profile resolver and executor of one identity, its
// result caches charged to the instance's shared budget. Called only once
// prom and agents are built.
func (d *Datasource) newScope(budget *prom.Budget) *scope {
	profiles := query.NewProfiles(d.prom, d.settings, d.now)
	ex := &query.Executor{Prom: d.prom, Settings: d.settings, Profiles: profiles, Agents: d.agents, Cache: budget.NewCache(nil)}
	return &scope{profiles: profiles, executor: ex}
}

// Dispose is called (by the SDK, a few seconds after the instance was
// replaced by one with new settings): it ends the requests still running
// on this instance, waits for them, then closes the connections they used.
func (d *Datasource) Dispose() {
	d.untrack()
	d.life.end()
	if d.prom != nil {
		d.prom.Close()
	}
	if d.agents != nil {
		d.agents.Close()
	}
}

// CheckHealth implements Grafana's "Save & test".
func (d *Datasource) CheckHealth(ctx context.Context, req *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if d.settingsErr != nil {
		return d.redact.health(&backend.CheckHealthResult{Status: backend.HealthStatusError, Message: d.settingsErr.Error()}), nil
	}
	var h http.Header
	if req != nil {
		h = req.GetHTTPHeaders()
	}
	u := d.userOf(ctx, h)
	res, err := d.checkHealth(u)
	return u.redact.health(res), err
}

func (d *Datasource) checkHealth(u user) (*backend.CheckHealthResult, error) {
	ctx, done, ok := d.life.begin(u.ctx)
	defer done()
	if !ok {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: errDisposed.Error()}, nil
	}
	profiles := u.scope.profiles
	profiles.Invalidate()
	res := health.Check(ctx, d.prom, profiles.Resolve(ctx).Settings, d.now())
	if disposedBy(ctx) {
		res = &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: errDisposed.Error()}
	}
	return res, nil
}
