//go:build !mutation

package query_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// specTruth sums the fleet's true spec-decode counters in the snapshot
// nearest to at.
func specTruth(env *fleettest.Env, at time.Time) (drafts, draftTokens, accepted, pos0 float64) {
	var best sim.Snapshot
	bestGap := time.Duration(math.MaxInt64)
	for _, s := range env.History() {
		if gap := s.Time.Sub(at).Abs(); gap < bestGap {
			best, bestGap = s, gap
		}
	}
	for _, es := range best.Engines {
		drafts += float64(es.SpecDrafts)
		draftTokens += float64(es.SpecDraftTokens)
		accepted += float64(es.SpecAcceptedTokens)
		if len(es.SpecAcceptedPerPos) > 0 {
			pos0 += float64(es.SpecAcceptedPerPos[0])
		}
	}
	return
}

// TestSpecDecodeAgainstTruth: real Prometheus scraping a fleet that runs
// speculative decoding; the fleet-wide acceptance rate, mean acceptance
// length and first-position rate at the last step equal the simulator's
// true counters over the same rate window.
func TestSpecDecodeAgainstTruth(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, withSpecAndLoRA(fleettest.HotFleet)(23))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:spec_decode_num_drafts_total[1m]) >= 40`, 8, 120*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now().Add(-2 * time.Second) // the truth history must cover the window's end
	// A 15s step makes the rate window 16s ($__rate_interval = step + scrape):
	// long enough that a scrape's offset from the window's edges moves the
	// ratio by little.
	r := run(t, e, dq("S", `{"queryType":"specDecode","grouping":"none","interval":"15s"}`, to.Add(-time.Minute), to)).Responses["S"]
	require.NoError(t, r.Error)
	frames := byName(r.Frames)
	window := 16 * time.Second
	last := func(name string) (time.Time, float64) {
		f := frames[name]
		require.NotNil(t, f, "frames: %v", keys(frames))
		return lastPoint(f)
	}
	at, rate := last("acceptance_rate")
	d1, t1, a1, p1 := specTruth(env, at)
	d0, t0, a0, p0 := specTruth(env, at.Add(-window))
	require.Positive(t, t1-t0, "the fleet drafted in the window")
	require.InDelta(t, (a1-a0)/(t1-t0), rate, 0.03, "acceptance rate = accepted ÷ draft tokens")

	_, length := last("mean_acceptance_length")
	require.InDelta(t, 1+(a1-a0)/(d1-d0), length, 0.06, "mean acceptance length = 1 + accepted ÷ drafts")
	_, first := last("acceptance_rate_pos0")
	require.InDelta(t, (p1-p0)/(d1-d0), first, 0.03, "position 0 = accepted at position 0 ÷ drafts")
	require.Contains(t, frames, "acceptance_rate_pos2", "one series per draft position (3 configured)")
	require.NotContains(t, frames, "acceptance_rate_pos3")

	t.Run("one series per engine", func(t *testing.T) {
		r := run(t, e, dq("S", `{"queryType":"specDecode","grouping":"instance_engine"}`, to.Add(-30*time.Second), to)).Responses["S"]
		require.NoError(t, r.Error)
		n := 0
		for _, f := range r.Frames {
			if f.Fields[1].Labels["signal"] == "acceptance_rate" {
				n++
			}
		}
		require.Equal(t, 8, n, "four instances of two engines")
	})
	t.Run("a fleet without speculative decoding: an info notice", func(t *testing.T) {
		plain := fleettest.Start(t, fleettest.HotFleet(29))
		plain.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 5`, 8, 60*time.Second)
		r := run(t, executor(t, plain.Prom.URL), dq("S", `{"queryType":"specDecode"}`, time.Now().Add(-10*time.Second), time.Now())).Responses["S"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 1)
		ns := r.Frames[0].Meta.Notices
		require.Len(t, ns, 1, noticeText(ns))
		require.Equal(t, data.NoticeSeverityInfo, ns[0].Severity)
		require.Contains(t, ns[0].Text, "--speculative-config")
	})
}

// TestLoRAAgainstTruth: the table shows, per instance, adapters the
// simulator really had in flight when vLLM last reported the set, with
// max_lora as configured, and the series' counts end where the table
// does. vLLM V1 writes the adapters of the requests its frontend tracks
// (first output to finish) into both labels, so the table is compared
// with the true running and waiting adapters of the instance's engines
// in the snapshots around that report, not with one split.
func TestLoRAAgainstTruth(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, withSpecAndLoRA(fleettest.HotFleet)(31))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:lora_requests_info[1m]) >= 10`, 4, 120*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now().Add(-2 * time.Second)
	r := run(t, e, dq("L", `{"queryType":"lora"}`, to.Add(-30*time.Second), to)).Responses["L"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1)
	f := r.Frames[0]
	require.Equal(t, len(env.Endpoints), f.Rows(), "one row per instance")
	busy := 0
	for i := range f.Rows() {
		inst := f.Fields[0].At(i).(string)
		running := splitNames(f.Fields[1].At(i).(string))
		require.Equal(t, running, splitNames(f.Fields[2].At(i).(string)), "current V1 lists the same adapters in both labels")
		require.Equal(t, int64(len(running)), f.Fields[3].At(i).(int64))
		require.Equal(t, int64(2), *f.Fields[5].At(i).(*int64), "max_lora")
		updated := f.Fields[6].At(i).(time.Time)
		require.True(t, inFlightAround(env, inst, updated, running), "%s: %v was not in flight around %s", inst, running, updated)
		if len(running) > 0 {
			busy++
		}
	}
	require.Positive(t, busy, "some instance had adapters in flight")

	t.Run("series end where the table does", func(t *testing.T) {
		s := run(t, e, dq("L", `{"queryType":"lora","format":"series"}`, to.Add(-30*time.Second), to)).Responses["L"]
		require.NoError(t, s.Error)
		series := byName(s.Frames)
		require.Len(t, series, 2*len(env.Endpoints))
		for i := range f.Rows() {
			_, n := lastPoint(series[f.Fields[0].At(i).(string)+" running_adapters"])
			require.Equal(t, float64(f.Fields[3].At(i).(int64)), n)
		}
	})
	t.Run("V0 exports the gauge without LoRA: not enabled, no table of zeros", func(t *testing.T) {
		v0 := fleettest.Start(t, v0Fleet(37))
		// Several scrapes of every series, not just the first: the query's
		// 10 s range must hold the engines' own series too, or the answer is
		// "no engine reported" (seen on a loaded machine).
		v0.Prom.WaitForSeries(t, `count_over_time(vllm:lora_requests_info[10s]) >= 4`, 4, 90*time.Second)
		v0.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[10s]) >= 4`, 4, 90*time.Second)
		r := run(t, executor(t, v0.Prom.URL), dq("L", `{"queryType":"lora"}`, time.Now().Add(-10*time.Second), time.Now())).Responses["L"]
		require.NoError(t, r.Error)
		require.Equal(t, 0, r.Frames[0].Rows())
		require.Contains(t, noticeText(r.Frames[0].Meta.Notices), "LoRA is not enabled on the selected servers")
	})
}

func splitNames(joined string) []string {
	var out []string
	for _, n := range strings.Split(joined, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// inFlightAround reports whether every adapter was running or waiting on
// one of the instance's engines in some snapshot within a second of at.
func inFlightAround(env *fleettest.Env, addr string, at time.Time, adapters []string) bool {
	for _, s := range env.History() {
		if s.Time.Sub(at).Abs() > time.Second {
			continue
		}
		have := map[string]bool{}
		for _, es := range s.Engines {
			if es.Addr != addr {
				continue
			}
			for _, n := range append(append([]string(nil), es.LoRARunning...), es.LoRAWaiting...) {
				have[n] = true
			}
		}
		all := true
		for _, a := range adapters {
			all = all && have[a]
		}
		if all {
			return true
		}
	}
	return false
}
