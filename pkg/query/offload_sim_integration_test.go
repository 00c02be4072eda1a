//go:build !mutation

package query_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// offloadTolerance is how far (relative) a prefixCache rate may be from the
// simulator's truth over the same window. The truth is the counters'
// difference over [end − window, end] from snapshots every 100 ms;
// Prometheus's rate() sees the counters at 1 s scrapes and extrapolates the
// last second at each edge of the 40 s window (a 10 s min step gives
// $__rate_interval = 4 × 10 s) from the window's average: 2 s of 40 s is
// 5% of the increase, which the flows here (Poisson arrivals at 6/s, each
// request's transfers a few MiB) can miss by about as much again.
const offloadTolerance = 0.1

// offloadTruth is one engine's counter, read from a snapshot.
type offloadTruth func(sim.EngineState) float64

// truthRate is the simulator's rate of counter c for instance i over
// [to − window, to].
func truthRate(t *testing.T, env *fleettest.Env, i int, to time.Time, window time.Duration, c offloadTruth) float64 {
	t.Helper()
	first, last := snapshotAt(env, to.Add(-window)), snapshotAt(env, to)
	require.NotNil(t, first, "a snapshot before the window")
	require.NotNil(t, last)
	var d float64
	for j, es := range last.Engines {
		if es.Instance == i {
			d += c(es) - c(first.Engines[j])
		}
	}
	return d / window.Seconds()
}

// TestPrefixCacheOffloadAgainstTheSimulator runs the prefixCache query
// through real Prometheus scraping simulated vLLM 0.32 engines with a CPU
// offload tier (--kv-offloading-size) and checks every offload series
// against the simulator's own counters over the query's rate window:
// cached prompt tokens by tier (EngineState.CachedBySource device and
// host), bytes loaded and stored (OffloadLoadBytes, OffloadStoreBytes),
// time share (OffloadLoadSeconds, OffloadStoreSeconds per second) and
// allocation failures (OffloadAllocationFailures). The tiers add up to the
// prompt tokens served from a cache; the engine whose tier never fails
// reads 0 failures, and a tier that never served a prompt has no series.
func TestPrefixCacheOffloadAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, fleettest.OffloadFleet(48))
	roomy, tiny := env.Endpoints[0].Addr, env.Endpoints[1].Addr
	env.Prom.WaitForSeries(t, `count_over_time(vllm:kv_offload_load_bytes_total[1m]) >= 55`, 1, 150*time.Second)
	env.Prom.WaitForSeries(t, `count_over_time(vllm:kv_offload_allocation_failure_total[1m]) >= 55`, 1, 60*time.Second)
	to := time.Now()
	r := run(t, executor(t, env.Prom.URL), dq("P", `{"queryType":"prefixCache","grouping":"instance","interval":"10s"}`, to.Add(-30*time.Second), to)).Responses["P"]
	require.NoError(t, r.Error)
	frames, window := byName(r.Frames), rateWindow(t, r.Frames)
	tests := []struct {
		inst  int
		sig   string
		truth offloadTruth
	}{
		{0, "cached_tokens_device", func(es sim.EngineState) float64 { return float64(es.CachedBySource["device"]) }},
		{0, "cached_tokens_host", func(es sim.EngineState) float64 { return float64(es.CachedBySource["host"]) }},
		{0, "offload_load_bytes", func(es sim.EngineState) float64 { return float64(es.OffloadLoadBytes) }},
		{0, "offload_store_bytes", func(es sim.EngineState) float64 { return float64(es.OffloadStoreBytes) }},
		{0, "offload_load_time_share", func(es sim.EngineState) float64 { return es.OffloadLoadSeconds }},
		{0, "offload_store_time_share", func(es sim.EngineState) float64 { return es.OffloadStoreSeconds }},
		{1, "cached_tokens_device", func(es sim.EngineState) float64 { return float64(es.CachedBySource["device"]) }},
		{1, "offload_store_bytes", func(es sim.EngineState) float64 { return float64(es.OffloadStoreBytes) }},
		{1, "offload_allocation_failures", func(es sim.EngineState) float64 { return float64(es.OffloadAllocationFailures) }},
	}
	for _, tt := range tests {
		addr := env.Endpoints[tt.inst].Addr
		f := frames[addr+" "+tt.sig]
		require.NotNil(t, f, "%s %s: frames %v", addr, tt.sig, keys(frames))
		end, got := lastPoint(f)
		want := truthRate(t, env, tt.inst, end, window, tt.truth)
		t.Logf("instance %d %s: plugin %.4g, simulator %.4g over %s", tt.inst, tt.sig, got, want, window)
		require.Positive(t, want, "%s moved in the window", tt.sig)
		require.InEpsilon(t, want, got, offloadTolerance, "instance %d %s", tt.inst, tt.sig)
	}
	t.Run("the tiers add up to the prompt tokens served from a cache", func(t *testing.T) {
		for _, addr := range []string{roomy, tiny} {
			var tiers, cached float64
			for _, sig := range []string{"cached_tokens_device", "cached_tokens_host"} {
				if f := frames[addr+" "+sig]; f != nil {
					_, v := lastPoint(f)
					tiers += v
				}
			}
			for _, sig := range []string{"prompt_tokens_local_cache_hit", "prompt_tokens_external_kv_transfer"} {
				_, v := lastPoint(frames[addr+" "+sig])
				cached += v
			}
			require.InEpsilon(t, cached, tiers, 1e-9, addr)
		}
	})
	t.Run("what an engine never did", func(t *testing.T) {
		// vLLM creates the failure counter at the first failure; the plugin
		// reads an engine that stores and never failed as 0, not absent.
		_, fails := lastPoint(frames[roomy+" offload_allocation_failures"])
		require.Zero(t, fails, "the large tier never failed")
		require.Zero(t, truthRate(t, env, 0, to, window, func(es sim.EngineState) float64 { return float64(es.OffloadAllocationFailures) }))
		require.Nil(t, frames[tiny+" cached_tokens_host"], "the tiny tier never served a prompt: no host series")
		for _, src := range []string{"p2p", "disk", "external_unspecified"} {
			require.Nil(t, frames[roomy+" cached_tokens_"+src])
		}
	})
}
