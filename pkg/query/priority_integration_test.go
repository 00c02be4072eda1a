//go:build !mutation

package query_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/sim"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestPriorityAgainstTruth: on Prometheus 2 and 3 and VictoriaMetrics
// scraping the priority fleet, each query type's per-priority answer
// against the simulator's request log over the same window: waitTime's
// queue-time p99 within one bucket, the queue's served rate, slo's
// attainment, workload's finished rate and mean prompt; the
// first-come-first-served servers answer without a priority (with the
// notice that says so) and a filter on "<-1" and ">1" keeps exactly those
// two classes.
func TestPriorityAgainstTruth(t *testing.T) {
	t.Parallel()
	env, servers := onEveryBackend(t, priorityFleet(38),
		`count_over_time(vllm:request_queue_time_seconds_count{priority=">1"}[1m]) >= 5`)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) { checkPriorityWait(t, env, servers[k]) })
	}
}

func checkPriorityWait(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	prio, fcfs, older := env.Endpoints[0].Addr, env.Endpoints[1].Addr, env.Endpoints[2].Addr
	firstScrape := fleettest.FirstScrape(t, srv)
	// A whole rate window (61s, 62s for VictoriaMetrics, ±3s) after the
	// first scrape, on a minute step, with a few seconds for ingestion.
	end := firstScrape.Add(66 * time.Second).Truncate(time.Minute).Add(time.Minute)
	if wait := time.Until(end.Add(3 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: []byte(js), Interval: time.Minute, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: end.Add(-time.Minute), To: end}}
	}
	e := executor(t, srv.URL)
	resp := run(t, e,
		q("P", `{"queryType":"waitTime","quantiles":[0.99],"grouping":"instance","byPriority":true,"instances":["`+prio+`"]}`),
		q("M", `{"queryType":"waitTime","quantiles":[0.99],"grouping":"instance","byPriority":true}`),
		q("F", `{"queryType":"waitTime","grouping":"instance","priorities":["<-1",">1"]}`),
		q("N", `{"queryType":"waitTime","grouping":"instance","byPriority":true,"instances":["`+fcfs+`","`+older+`"]}`),
		q("Q", `{"queryType":"queue","grouping":"instance","byPriority":true}`),
		q("S", `{"queryType":"slo","grouping":"instance","family":"queue_time","threshold":1,"window":"1h","byPriority":true,"signals":["attainment"],"instances":["`+prio+`"]}`),
		q("W", `{"queryType":"workload","grouping":"instance","byPriority":true,"instances":["`+prio+`"]}`))
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
	}

	t.Run("per-priority p99 against the request log", func(t *testing.T) {
		frames := byName(resp.Responses["P"].Frames)
		for _, class := range models.PriorityClasses {
			f := frames[prio+"/"+class+" p99"]
			require.NotNil(t, f, "frames: %v", keys(frames))
			at, got := lastValue(t, f)
			lo, hi, n := simulatedClassP99(env, class, at, firstScrape)
			require.Greater(t, n, 30, "%s: requests in the window", class)
			b := bucketIndex(got)
			t.Logf("priority %s: p99 %.3fs, simulator %.3f..%.3fs over %d requests", class, got, lo, hi, n)
			require.True(t, bucketIndex(lo)-1 <= b && b <= bucketIndex(hi)+1,
				"priority %s: histogram p99 %.3fs is more than one bucket from the simulator's %.3f..%.3fs", class, got, lo, hi)
		}
		require.NotContains(t, noticeTexts(resp.Responses["P"].Frames), vllm.NoPriorityText)
	})

	t.Run("queue: requests served per class against the request log", func(t *testing.T) {
		r := resp.Responses["Q"]
		frames := byName(r.Frames)
		for _, class := range models.PriorityClasses {
			at, got := lastValue(t, frames[prio+"/"+class+" served"])
			_, _, n := simulatedClassP99(env, class, at, firstScrape)
			t.Logf("priority %s: %.3f served/s, simulator %.3f/s", class, got, float64(n)/61)
			require.InEpsilon(t, float64(n)/61, got, 0.25, class)
			require.Contains(t, frames, prio+"/"+class+" queue_time_mean")
		}
		require.Contains(t, frames, prio+" waiting", "the gauges stay per instance: %v", keys(frames))
		require.Contains(t, frames, fcfs+" served")
		require.Contains(t, noticeTexts(r.Frames), vllm.QueueByPriorityText)
		require.Contains(t, noticeTexts(r.Frames), vllm.SomeWithoutPriorityText)
	})

	t.Run("slo: attainment per class against the request log", func(t *testing.T) {
		frames := byName(resp.Responses["S"].Frames)
		for _, class := range models.PriorityClasses {
			f := frames[prio+"/"+class+" attainment"]
			require.NotNil(t, f, "frames: %v", keys(frames))
			at, got := lastValue(t, f)
			want, n := classShareWithin(env, class, time.Second, firstScrape, at)
			t.Logf("priority %s: %.4f of requests queued at most 1s, simulator %.4f of %d", class, got, want, n)
			require.InDelta(t, want, got, 0.03, class)
		}
	})

	t.Run("workload: finished requests and mean prompt per class against the request log", func(t *testing.T) {
		frames := byName(resp.Responses["W"].Frames)
		for _, class := range models.PriorityClasses {
			at, got := lastValue(t, frames[prio+"/"+class+" requests"])
			_, _, n := simulatedClassP99(env, class, at, firstScrape)
			t.Logf("priority %s: %.3f finished/s, simulator %.3f/s", class, got, float64(n)/61)
			require.InEpsilon(t, float64(n)/61, got, 0.25, class)
			_, prompt := lastValue(t, frames[prio+"/"+class+" prompt_tokens_mean"])
			require.InEpsilon(t, classMeanPrompt(env, class, at), prompt, 0.2, class)
		}
	})

	t.Run("mixed fleet: the servers without priority answer without it", func(t *testing.T) {
		r := resp.Responses["M"]
		frames := byName(r.Frames)
		for _, class := range models.PriorityClasses {
			require.Contains(t, frames, prio+"/"+class+" p99")
		}
		require.Contains(t, frames, fcfs+" p99", "frames: %v", keys(frames))
		require.Contains(t, frames, older+" p99")
		require.Contains(t, noticeTexts(r.Frames), vllm.SomeWithoutPriorityText)
	})

	t.Run("a filter on <-1 and >1 keeps those classes", func(t *testing.T) {
		r := resp.Responses["F"]
		require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, `priority=~"<-1|>1"`)
		var instances []string
		for _, f := range r.Frames {
			instances = append(instances, strings.Fields(f.Name)[0])
		}
		require.NotEmpty(t, instances)
		for _, inst := range instances {
			require.Equal(t, prio, inst, "only the priority server has these classes")
		}
		require.Len(t, r.Frames, 4, "p50, p90, p99 and mean of the two classes together")
	})

	t.Run("servers without priority scheduling get the notice", func(t *testing.T) {
		r := resp.Responses["N"]
		require.Contains(t, noticeTexts(r.Frames), vllm.NoPriorityText)
		frames := byName(r.Frames)
		require.Contains(t, frames, fcfs+" p99", "frames: %v", keys(frames))
		require.Contains(t, frames, older+" mean")
	})
}

// simulatedClassP99 is the queue-time p99 of the priority server's
// requests of class that finished after the first scrape in windows of
// 61s and 62s (the rate window, and the sample before it) ending up to 3s
// either side of at: the lowest and highest such p99, and the fewest
// requests any window held.
func simulatedClassP99(env *fleettest.Env, class string, at, firstScrape time.Time) (lo, hi float64, n int) {
	lo, hi, n = -1, -1, -1
	for _, window := range []time.Duration{61 * time.Second, 62 * time.Second} {
		for shift := -3 * time.Second; shift <= 3*time.Second; shift += time.Second {
			end := at.Add(shift)
			var waits []float64
			for _, c := range env.Fleet.CompletedRequests() {
				fin := env.Fleet.WallTime(c.Finished)
				if c.Instance == 0 && !c.ClientAborted && sim.PriorityLabel(c.Priority) == class &&
					fin.After(end.Add(-window)) && fin.After(firstScrape) && !fin.After(end) {
					waits = append(waits, c.QueueTime.Seconds())
				}
			}
			if len(waits) == 0 {
				continue
			}
			sort.Float64s(waits)
			p := waits[min(len(waits)-1, len(waits)*99/100)]
			if lo < 0 || p < lo {
				lo = p
			}
			hi = max(hi, p)
			if n < 0 || len(waits) < n {
				n = len(waits)
			}
		}
	}
	return lo, hi, n
}

// classShareWithin is the share of the priority server's finished requests
// of class, from the first scrape to at, whose queue time was at most
// bound, and how many there were: what an objective's attainment over a
// window longer than the run reads.
func classShareWithin(env *fleettest.Env, class string, bound time.Duration, firstScrape, at time.Time) (float64, int) {
	var good, n int
	for _, c := range env.Fleet.CompletedRequests() {
		fin := env.Fleet.WallTime(c.Finished)
		if c.Instance != 0 || c.ClientAborted || sim.PriorityLabel(c.Priority) != class || !fin.After(firstScrape) || fin.After(at) {
			continue
		}
		n++
		if c.QueueTime <= bound {
			good++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(good) / float64(n), n
}

// classMeanPrompt is the mean prompt length of the priority server's
// requests of class that finished in the minute before at.
func classMeanPrompt(env *fleettest.Env, class string, at time.Time) float64 {
	var sum, n float64
	for _, c := range env.Fleet.CompletedRequests() {
		fin := env.Fleet.WallTime(c.Finished)
		if c.Instance == 0 && !c.ClientAborted && sim.PriorityLabel(c.Priority) == class && fin.After(at.Add(-61*time.Second)) && !fin.After(at) {
			sum += float64(c.PromptTokens)
			n++
		}
	}
	return sum / n
}
