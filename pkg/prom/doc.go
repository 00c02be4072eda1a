// Package prom is the plugin's only way to Prometheus (or a compatible
// server such as Thanos, Mimir or VictoriaMetrics). It wraps client_golang's
// v1 API over the SDK's HTTP client, so auth, custom headers and TLS from the
// data source's HTTP settings apply, and it returns typed results and
// classified errors, never frames. The result types themselves live in
// pkg/prom/series (aliased here as Series and Matrix), so that code which
// only reads results builds without this client.
package prom
