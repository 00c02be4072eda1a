// Package gtimeparity holds only tests: they pin pkg/interval's copy of
// Grafana's step math (interval.Round, interval.Format, interval.Parse and
// the min-interval rule inside interval.Compute) to the plugin SDK's
// backend/gtime package, input for input, error messages included.
//
// pkg/interval copies those helpers instead of importing gtime because
// gtime imports the SDK's backend package and, with it, gRPC, Arrow and
// OpenTelemetry: some 400 packages that every `go test -fuzz` run of
// pkg/interval would instrument. The comparison lives here, in a package of
// its own, so that the SDK stays out of pkg/interval's test binary while a
// change in either copy (or an SDK upgrade that changes gtime) still fails
// a test.
package gtimeparity
