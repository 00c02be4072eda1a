// Package prom is the plugin's only way to Prometheus (or a compatible
// server such as Thanos, Mimir or VictoriaMetrics). It wraps client_golang's
// v1 API over the SDK's HTTP client, so auth, custom headers and TLS from the
// data source's HTTP settings apply, and it returns typed results and
// classified errors, never frames.
package prom
