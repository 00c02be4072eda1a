// Package interval computes the Prometheus query step and Grafana's built-in
// interval variables exactly as Grafana's own Prometheus data source does, so
// that a panel looks the same whichever data source drew it.
//
// Compute turns a query's time range, max data points, the frontend's
// $__interval, the query's own min-step string and the data source's scrape
// interval into a Result: the step, the step-aligned start and end, and the
// values of $__interval, $__rate_interval and $__range. The step rules are:
//
//  1. minInterval = the query's min step if set (not "", not "0s" and not a
//     variable), else intervalMs if non-zero, else the scrape interval, else
//     15s.
//  2. calculated = max(minInterval, Round(range / maxDataPoints)),
//     with maxDataPoints 0 meaning 1500.
//  3. safe = Round(range / 11000), Prometheus's per-series limit.
//  4. step = max(calculated, safe).
//  5. If the min step was $__rate_interval, step = rateInterval(step, scrape),
//     where rateInterval(i, s) = max(i + s, 4 × s).
//
// Because Round may round down, step 4 alone can still ask for more
// than 11,000 points; Compute then raises the step and sets Result.Clamped.
//
// Interpolate substitutes the built-in variables into an expression and
// HasUnresolvedVariable reports any template variable left over (dashboard
// variables are interpolated by the frontend, so one reaching the backend,
// as in an alert rule, is an error the caller should name).
//
// Round, Format and Parse are Grafana's rounding, $__interval formatting
// and interval parsing, copied from the plugin SDK's backend/gtime package
// rather than imported, so that the package (and its fuzz target) does not
// pull in the SDK's backend; pkg/internal/gtimeparity checks that they
// still agree with gtime.
//
// The package is pure: no I/O, no clocks, no global state.
package interval
