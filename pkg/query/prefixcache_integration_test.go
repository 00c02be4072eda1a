//go:build !mutation

package query_test

import (
	"math"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// prefixTolerance is how far the plugin's hit rate may be from the
// simulator's truth, as a share (0.04 = 4 points). The truth is counted
// over [end − window, end] from snapshots every 100 ms; Prometheus reads
// the counters at its 1 s scrapes inside that window, so up to a second
// of tokens at each edge may fall on the other side (a second is 2.5% of
// the 40 s window the tests use: a 10 s min step gives $__rate_interval =
// 4 × 10 s), with a hit fraction anywhere in [0, 1].
const prefixTolerance = 0.04

// prefixFleet is HotFleet whose hot instance (four times the arrivals,
// with a KV cache large enough to serve them) finds far more of its
// prompts in the prefix cache than the others (0.9 against 0.05): the
// summed ratio and the mean of the engines' ratios then differ by much
// more than the tolerance, so the test tells them apart.
func prefixFleet(seed uint64) sim.Config {
	cfg := fleettest.HotFleet(seed)
	hot := cfg.Engine
	hot.PrefixHitRate = 0.9
	cfg.Instances[0].Engine = &hot
	cfg.Engine.PrefixHitRate = 0.05
	return cfg
}

// TestPrefixCacheHitRateIsTruth runs the prefixCache query through real
// Prometheus scraping the simulator and checks the hit rate against the
// simulator's own counters: fleet-wide it is summed hits over summed
// queries (not the mean of the engines' rates), and per instance too.
func TestPrefixCacheHitRateIsTruth(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, prefixFleet(31))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:prefix_cache_queries_total[1m]) >= 55`, 8, 120*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now()

	t.Run("fleet-wide: the ratio of summed rates", func(t *testing.T) {
		r := run(t, e, dq("P", `{"queryType":"prefixCache","grouping":"none","interval":"10s"}`, to.Add(-30*time.Second), to)).Responses["P"]
		require.NoError(t, r.Error)
		f := byName(r.Frames)["hit_rate"]
		require.NotNil(t, f, "frames: %v", keys(byName(r.Frames)))
		require.Equal(t, "percentunit", f.Fields[1].Config.Unit)
		end, got := lastPoint(f)
		window := rateWindow(t, r.Frames)
		require.True(t, end.Add(-window).After(env.Started), "the window is a part of the fleet's life, not all of it")
		sum, mean := prefixTruth(t, env, end.Add(-window), end, func(sim.EngineState) bool { return true })
		t.Logf("hit rate %.4f, truth %.4f, mean of engines %.4f, window %s", got, sum, mean, window)
		require.InDelta(t, sum, got, prefixTolerance, "hit rate at %s over %s (truth %.3f, mean of engines %.3f)", end, window, sum, mean)
		require.Greater(t, math.Abs(sum-mean), 2*prefixTolerance, "the fleet must tell a summed ratio from a mean of ratios")
		for _, src := range []string{"local_compute", "local_cache_hit", "external_kv_transfer"} {
			f := byName(r.Frames)["prompt_tokens_"+src]
			require.NotNil(t, f, src)
			_, v := lastPoint(f)
			require.GreaterOrEqual(t, v, 0.0, src)
		}
		_, ext := byName(r.Frames)["external_hit_rate"]
		require.False(t, ext, "no KV connector: the external hit rate has no point, never NaN")
		require.Contains(t, noticeText(r.Frames[0].Meta.Notices), "no KV connector is configured")
	})
	t.Run("fleet table column per engine", func(t *testing.T) {
		r := run(t, e, dq("F", `{"queryType":"fleet","interval":"10s"}`, to.Add(-30*time.Second), to)).Responses["F"]
		prefixFleetColumn(t, env, r, to.Truncate(10*time.Second))
	})
	t.Run("per instance", func(t *testing.T) {
		r := run(t, e, dq("P", `{"queryType":"prefixCache","grouping":"instance","interval":"10s"}`, to.Add(-30*time.Second), to)).Responses["P"]
		require.NoError(t, r.Error)
		window := rateWindow(t, r.Frames)
		for i, ep := range env.Endpoints {
			f := byName(r.Frames)[ep.Addr+" hit_rate"]
			require.NotNil(t, f, ep.Addr)
			end, got := lastPoint(f)
			sum, _ := prefixTruth(t, env, end.Add(-window), end, func(es sim.EngineState) bool { return es.Instance == i })
			require.InDelta(t, sum, got, prefixTolerance, "%s", ep.Addr)
		}
	})
}

// prefixFleetColumn checks the fleet table's hit-rate column, engine by
// engine, against the simulator's truth over the fleet query's window
// (which ends at end, the query's end aligned to its step).
func prefixFleetColumn(t *testing.T, env *fleettest.Env, r backend.DataResponse, end time.Time) {
	t.Helper()
	require.NoError(t, r.Error)
	m := regexp.MustCompile(`rate\(vllm:prefix_cache_hits_total\[(\d+)s\]\)`).FindStringSubmatch(r.Frames[0].Meta.ExecutedQueryString)
	require.NotNil(t, m, "the fleet reads the hit counters")
	secs, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	rows := fleetRows(t, r.Frames[0])
	require.Len(t, rows, 8)
	for _, row := range rows {
		v, ok := row["prefix cache hit rate"].(float64)
		require.True(t, ok, "every engine has a hit rate: %v", row)
		inst := -1
		for i, ep := range env.Endpoints {
			if ep.Addr == row["instance"] {
				inst = i
			}
		}
		rank, err := strconv.Atoi(row["engine"].(string))
		require.NoError(t, err)
		sum, _ := prefixTruth(t, env, end.Add(-time.Duration(secs)*time.Second), end,
			func(es sim.EngineState) bool { return es.Instance == inst && es.Engine == rank })
		require.InDelta(t, sum, v, prefixTolerance, "%v", row)
	}
}

// TestPrefixCacheMixedFleet: a fleet with a V0 instance shows one hit-rate
// series per instance, the V0 one read from its gauge, with a notice that
// says so; none is "No data".
func TestPrefixCacheMixedFleet(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, fleettest.MixedFleet(32))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 20`, 5, 90*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now()
	r := run(t, e, dq("P", `{"queryType":"prefixCache","grouping":"instance","interval":"10s"}`, to.Add(-20*time.Second), to)).Responses["P"]
	require.NoError(t, r.Error)
	frames := byName(r.Frames)
	for _, ep := range env.Endpoints {
		_, v := lastPoint(frames[ep.Addr+" hit_rate"])
		require.False(t, math.IsNaN(v), "%s has a hit rate: frames %v", ep.Addr, keys(frames))
		require.GreaterOrEqual(t, v, 0.0)
		require.LessOrEqual(t, v, 1.0)
	}
	// V0's gauge is vLLM's own ratio since the engine started.
	end, got := lastPoint(frames[env.Endpoints[1].Addr+" hit_rate"])
	v0, _ := prefixTruth(t, env, env.Started.Add(-time.Hour), end, func(es sim.EngineState) bool { return es.Instance == 1 })
	require.InDelta(t, v0, got, prefixTolerance, "V0 gauge")
	notes := noticeText(r.Frames[0].Meta.Notices)
	require.Contains(t, notes, "V0's own vllm:gpu_prefix_cache_hit_rate")
}

// rateWindow reads the rate window the query used from its executed PromQL.
func rateWindow(t *testing.T, frames data.Frames) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`\[(\d+)s\]`).FindStringSubmatch(frames[0].Meta.ExecutedQueryString)
	require.NotNil(t, m, frames[0].Meta.ExecutedQueryString)
	s, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return time.Duration(s) * time.Second
}

// prefixTruth is the simulator's hit rate of the chosen engines between
// two times: summed hit tokens over summed queried tokens, and the mean
// of the engines' own ratios (engines that queried nothing left out).
func prefixTruth(t *testing.T, env *fleettest.Env, from, to time.Time, keep func(sim.EngineState) bool) (sum, mean float64) {
	t.Helper()
	first, last := snapshotAt(env, from), snapshotAt(env, to)
	require.NotNil(t, last, "no snapshot by %s", to)
	var q, h, ratios float64
	n := 0
	for i, es := range last.Engines {
		if !keep(es) {
			continue
		}
		dq, dh := float64(es.PrefixQueries), float64(es.PrefixHits)
		if first != nil {
			dq -= float64(first.Engines[i].PrefixQueries)
			dh -= float64(first.Engines[i].PrefixHits)
		}
		q, h = q+dq, h+dh
		if dq > 0 {
			ratios += dh / dq
			n++
		}
	}
	require.Positive(t, q, "the chosen engines queried the prefix cache")
	return h / q, ratios / float64(n)
}

// snapshotAt is the last recorded snapshot at or before ts (nil if none).
func snapshotAt(env *fleettest.Env, ts time.Time) *sim.Snapshot {
	var out *sim.Snapshot
	for _, s := range env.History() {
		if s.Time.After(ts) {
			break
		}
		out = &s
	}
	return out
}

// TestPrefixCacheFleetWithoutIt: engines that export no prefix-cache
// metric at all get an answer with info notices naming each missing
// metric and the vLLM setting behind it, never an error.
func TestPrefixCacheFleetWithoutIt(t *testing.T) {
	t.Parallel()
	srv := promtest.Start(t, promtest.Options{Targets: []string{promtest.ServeExposition(t, []byte(queueOnly))}})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 3`, 1, 60*time.Second)
	to := time.Now()
	r := run(t, executor(t, srv.URL), dq("P", `{"queryType":"prefixCache"}`, to.Add(-10*time.Second), to)).Responses["P"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1, "one empty frame that carries the notices")
	ns := r.Frames[0].Meta.Notices
	require.Len(t, ns, 5, "one per family: %s", noticeText(ns))
	for _, n := range ns {
		require.Equal(t, data.NoticeSeverityInfo, n.Severity, n.Text)
	}
	text := noticeText(ns)
	for _, want := range []string{"exports no vllm:prefix_cache_hits_total", "--no-enable-prefix-caching", "--kv-transfer-config", "vllm:prompt_tokens_by_source_total from 0.16.0",
		"exports no vllm:prompt_tokens_cached_by_source_total", "exports no vllm:kv_offload_store_bytes_total", "--kv-offloading-size"} {
		require.Contains(t, text, want)
	}
}
