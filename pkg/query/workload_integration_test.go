//go:build !mutation

package query_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// erringFleet is the hot fleet with injected engine errors and client
// aborts: errors reach request_success and the length histograms, client
// aborts reach neither.
func erringFleet(seed uint64) sim.Config {
	cfg := fleettest.HotFleet(seed)
	set := func(p *sim.EngineParams) { p.ErrorRate, p.AbortRate = 0.1, 0.15 }
	set(&cfg.Engine)
	for i := range cfg.Instances {
		if cfg.Instances[i].Engine != nil {
			set(cfg.Instances[i].Engine)
		}
	}
	return cfg
}

// TestWorkloadAgainstTruth runs the workload query and the availability
// objective against Prometheus scraping a fleet with injected errors and
// client aborts, and compares them with the simulator's own requests:
// length distributions bucket by bucket, the error share and attainment
// with its finished-by-reason counts.
func TestWorkloadAgainstTruth(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, erringFleet(23))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:request_prompt_tokens_count[2m]) >= 70`, 8, 150*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now().Truncate(time.Second)
	// Every engine's samples past the range's end must be stored before the
	// query: on a loaded machine scrapes run late, and a last step whose
	// window lacks its newest seconds undercounts (6-9% low in full runs).
	env.Prom.WaitForSeries(t, fmt.Sprintf(`min(timestamp(vllm:request_prompt_tokens_count)) > %d`, to.Unix()+1), 1, 30*time.Second)
	done := env.Fleet.CompletedRequests()
	lengths := map[string]func(sim.CompletedRequest) float64{
		"prompt":     func(c sim.CompletedRequest) float64 { return float64(c.PromptTokens) },
		"generation": func(c sim.CompletedRequest) float64 { return float64(c.OutputTokens) },
	}
	for view, length := range lengths {
		t.Run(view+" lengths", func(t *testing.T) {
			js := fmt.Sprintf(`{"queryType":"workload","view":%q,"grouping":"none","interval":"20s"}`, view)
			r := run(t, e, dq("W", js, to.Add(-60*time.Second), to)).Responses["W"]
			require.NoError(t, r.Error)
			require.Len(t, r.Frames, 1)
			checkLengths(t, env.Fleet, done, r.Frames[0], 20*time.Second, length)
			requireCountsAll(t, env.Prom.URL, "vllm:request_"+view+"_tokens_count", r.Frames[0], 20*time.Second)
		})
	}
	// Latency heatmaps (waitTime's heatmap format): queue time and e2e are
	// recorded when a request finishes, as the lengths are, so the same
	// request log is their truth.
	latencies := map[string]func(sim.CompletedRequest) float64{
		"queue_time": func(c sim.CompletedRequest) float64 { return c.QueueTime.Seconds() },
		"e2e":        func(c sim.CompletedRequest) float64 { return c.E2E.Seconds() },
	}
	for family, latency := range latencies {
		t.Run(family+" heatmap", func(t *testing.T) {
			js := fmt.Sprintf(`{"queryType":"waitTime","format":"heatmap","family":%q,"grouping":"none","interval":"20s"}`, family)
			r := run(t, e, dq("L", js, to.Add(-60*time.Second), to)).Responses["L"]
			require.NoError(t, r.Error)
			require.Len(t, r.Frames, 1)
			checkLengths(t, env.Fleet, done, r.Frames[0], 20*time.Second, latency)
			requireCountsAll(t, env.Prom.URL, "vllm:"+map[string]string{"queue_time": "request_queue_time_seconds", "e2e": "e2e_request_latency_seconds"}[family]+"_count", r.Frames[0], 20*time.Second)
		})
	}
	t.Run("error share", func(t *testing.T) {
		r := run(t, e, dq("W", `{"queryType":"workload","grouping":"none","interval":"20s"}`, to.Add(-60*time.Second), to)).Responses["W"]
		require.NoError(t, r.Error)
		require.Contains(t, noticeTexts(r.Frames), "Client aborts never reach vLLM's finished-request metrics")
		share := byName(r.Frames)["error_share"]
		require.NotNil(t, share, "frames: %v", keys(byName(r.Frames)))
		require.Equal(t, "percentunit", share.Fields[1].Config.Unit)
		want, n := truthErrorShare(env.Fleet, done, share, 21*time.Second)
		got := meanValue(share)
		t.Logf("error share %.3f, simulator %.3f over %d finished requests", got, want, n)
		require.Greater(t, n, 300)
		require.InDelta(t, want, got, 0.03)
	})
	t.Run("availability attainment", func(t *testing.T) {
		r := run(t, e, dq("S", `{"queryType":"slo","objective":"availability","target":0.95,"window":"1h","grouping":"instance"}`, to.Add(-10*time.Second), to)).Responses["S"]
		require.NoError(t, r.Error)
		fs := byName(r.Frames)
		snap := env.Fleet.Snapshot()
		for i, ep := range env.Endpoints {
			att := fs[ep.Addr+" attainment"]
			require.NotNil(t, att, "frames: %v", keys(fs))
			_, got := lastPoint(att)
			errs, all := finishedErrors(snap, i)
			want := 1 - errs/all
			t.Logf("instance %d: attainment %.4f, simulator %.4f (%g errors of %g finished)", i, got, want, errs, all)
			require.InDelta(t, want, got, 0.02, "instance %d", i)
			_, left := lastPoint(fs[ep.Addr+" error_budget_left"])
			require.InDelta(t, 1-(1-got)/0.05, left, 1e-6, "budget left = 1 - errors/allowed")
		}
	})
}

// checkLengths compares the heatmap's counts, bucket by bucket, with the
// simulator's requests finished in the steps the frame covers (client
// aborts excluded: vLLM observes no length or latency for them), each
// measured by length (a token count or a latency in seconds).
func checkLengths(t *testing.T, f *sim.Fleet, done []sim.CompletedRequest, fr *data.Frame, step time.Duration, length func(sim.CompletedRequest) float64) {
	t.Helper()
	require.Equal(t, frames.FrameTypeHeatmapRows, fr.Meta.Type)
	first := fr.Fields[0].At(0).(time.Time)
	last := fr.Fields[0].At(fr.Rows() - 1).(time.Time)
	from := first.Add(-step)
	var total, truthTotal float64
	got, want := map[string]float64{}, map[string]float64{}
	lower := 0.0
	for _, fd := range fr.Fields[1:] {
		le, err := strconv.ParseFloat(fd.Name, 64)
		require.NoError(t, err, fd.Name)
		for i := 0; i < fd.Len(); i++ {
			got[fd.Name] += fd.At(i).(float64)
		}
		for _, c := range done {
			fin := f.WallTime(c.Finished)
			if c.ClientAborted || !fin.After(from) || fin.After(last) {
				continue
			}
			if n := length(c); n > lower && n <= le {
				want[fd.Name]++
			}
		}
		total += got[fd.Name]
		truthTotal += want[fd.Name]
		lower = le
	}
	t.Logf("%s; %d steps %s to %s: heatmap %v, simulator %v", fr.Meta.ExecutedQueryString, fr.Rows(), first, last, got, want)
	require.Greater(t, truthTotal, 300.0, "enough requests to compare")
	// 15%, not exact: increase() extrapolates each step's window from the
	// samples inside it, and on a loaded machine late, irregular scrapes
	// leave part of each window's edges out (5.7% and 8.2% low seen in
	// full CI runs). requireCountsAll checks the total exactly against
	// Prometheus' own count; counting half, the bug this guards against,
	// is far outside either.
	require.InDelta(t, truthTotal, total, 0.15*truthTotal, "requests counted over the frame's steps")
	for le, w := range want {
		require.InDelta(t, w/truthTotal, got[le]/total, 0.02, "share of bucket le=%s", le)
	}
}

// requireCountsAll checks that the heatmap's buckets add up, step by
// step, to what Prometheus counts over the same windows with the same
// function: no bucket dropped or counted twice when the cumulative
// buckets are taken apart.
func requireCountsAll(t *testing.T, url, count string, fr *data.Frame, step time.Duration) {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	for i := 0; i < fr.Rows(); i++ {
		at := fr.Fields[0].At(i).(time.Time)
		vec, _, err := c.Query(context.Background(), fmt.Sprintf("sum(increase(%s[%s]))", count, promDur(step)), at)
		require.NoError(t, err)
		require.Len(t, vec, 1, "a count at %s", at)
		row := 0.0
		for _, fd := range fr.Fields[1:] {
			row += fd.At(i).(float64)
		}
		want := float64(vec[0].Value)
		if math.Abs(want-row) > 1e-9*math.Max(1, want) {
			// Seen once under a cold run's load (0.5 short at the first
			// step), not explained: say whether Prometheus' own +Inf
			// bucket agrees with its count now, to tell a changed answer
			// from a bucket the frame lost.
			inf, _, err := c.Query(context.Background(), fmt.Sprintf(`sum(increase(%s{le="+Inf"}[%s]))`,
				strings.TrimSuffix(count, "_count")+"_bucket", promDur(step)), at)
			t.Logf("step %s: Prometheus' +Inf bucket now %v (err %v), its count %g, the frame's buckets %g", at, inf, err, want, row)
		}
		require.InDelta(t, want, row, 1e-9*math.Max(1, want), "step %s: the buckets add up to Prometheus' count", at)
	}
}

// promDur writes a whole-second duration as PromQL reads it.
func promDur(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

// truthErrorShare is the share of requests finished with an error among
// all finished (client aborts excluded) from one rate window before the
// series' first point to its last.
func truthErrorShare(f *sim.Fleet, done []sim.CompletedRequest, fr *data.Frame, window time.Duration) (float64, int) {
	from := fr.Fields[0].At(0).(time.Time).Add(-window)
	to := fr.Fields[0].At(fr.Rows() - 1).(time.Time)
	errs, n := 0, 0
	for _, c := range done {
		fin := f.WallTime(c.Finished)
		if c.ClientAborted || !fin.After(from) || fin.After(to) {
			continue
		}
		n++
		if c.Reason == "error" {
			errs++
		}
	}
	return float64(errs) / float64(n), n
}

// finishedErrors sums an instance's engines' finished requests by reason:
// errors and all (client aborts are not among them).
func finishedErrors(s sim.Snapshot, instance int) (errs, all float64) {
	for _, e := range s.Engines {
		if e.Instance != instance {
			continue
		}
		for reason, n := range e.FinishedByReason {
			all += float64(n)
			if reason == "error" {
				errs += float64(n)
			}
		}
	}
	return errs, all
}

// meanValue is the mean of a series' values that are numbers.
func meanValue(f *data.Frame) float64 {
	sum, n := 0.0, 0
	for i := 0; i < f.Rows(); i++ {
		if v := f.Fields[1].At(i).(float64); !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	return sum / float64(n)
}
