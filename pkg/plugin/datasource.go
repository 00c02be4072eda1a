// Package plugin wires the data source together: it creates instances from
// Grafana's settings and routes QueryData, CheckHealth and CallResource to
// the packages that do the work. It holds no query, PromQL or frame logic.
package plugin

import (
	"context"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"

	"github.com/inferops/vllm-datasource/pkg/agent"
	"github.com/inferops/vllm-datasource/pkg/health"
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
	agents      *agent.Client
	profiles    *query.Profiles
	executor    *query.Executor
	now         func() time.Time
	life        *lifecycle
	redact      redactor
}

// NewDatasource is the instance factory Grafana's SDK calls when a data
// source is created or its settings change.
func NewDatasource(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	ds := &Datasource{now: time.Now, life: newLifecycle(), redact: newRedactor(s)}
	ds.settings, ds.settingsErr = models.LoadSettings(ctx, s)
	if ds.settingsErr != nil {
		return ds, nil
	}
	ds.prom, ds.settingsErr = prom.New(prom.Options{URL: ds.settings.URL, HTTP: ds.settings.HTTPOptions, MaxConcurrent: ds.settings.MaxConcurrentQueries})
	if ds.settingsErr != nil {
		return ds, nil
	}
	ds.profiles = query.NewProfiles(ds.prom, ds.settings, ds.now)
	ds.executor = &query.Executor{Prom: ds.prom, Settings: ds.settings, Profiles: ds.profiles}
	agents, err := agent.NewClient(agent.Options{Timeout: ds.settings.Agents.Timeout, Token: ds.settings.Agents.Token})
	if err != nil {
		ds.settingsErr = err
		return ds, nil
	}
	ds.agents, ds.executor.Agents = agents, agents
	return ds, nil
}

// Dispose is called (by the SDK, a few seconds after the instance was
// replaced by one with new settings): it ends the requests still running
// on this instance, waits for them, then closes the connections they used.
func (d *Datasource) Dispose() {
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
	res, err := d.checkHealth(ctx, req)
	return d.redact.health(res), err
}

func (d *Datasource) checkHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if d.settingsErr != nil {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: d.settingsErr.Error()}, nil
	}
	ctx, done, ok := d.life.begin(ctx)
	defer done()
	if !ok {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: errDisposed.Error()}, nil
	}
	d.profiles.Invalidate()
	res := health.Check(ctx, d.prom, d.profiles.Resolve(ctx).Settings, d.now())
	if disposedBy(ctx) {
		res = &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: errDisposed.Error()}
	}
	return res, nil
}
