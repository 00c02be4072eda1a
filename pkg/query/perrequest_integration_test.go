//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// preemptingFleet is a vLLM 0.32 server whose tiny KV cache preempts
// often, at five simulated seconds per second, beside an older V1 server
// without request_num_preemptions.
func preemptingFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew, cfg.Speed, cfg.RequestLog = seed, 0.7, 0, 5, 100000
	tiny := cfg.Engine
	tiny.NumGPUBlocks, tiny.MaxNumSeqs = 48, 64
	tiny.PromptTokens = sim.Dist{Kind: sim.Uniform, A: 50, B: 200}
	tiny.OutputTokens = sim.Dist{Kind: sim.Uniform, A: 100, B: 300}
	cfg.Instances = []sim.InstanceConfig{
		{Model: "m", Engines: 1, Release: sim.Release032, Engine: &tiny},
		{Model: "m", Engines: 1},
	}
	return cfg
}

// TestPreemptionsPerRequestThroughPrometheus: the per-request distribution
// read through real Prometheus matches the simulator's finished requests
// over the same window: the share preempted more than once and the mean
// closely, the p99 inside the bucket holding the true p99, the share
// preempted at least once bounded from above; the older server has no
// series (not zeros), and alone it gets the notice naming the family.
func TestPreemptionsPerRequestThroughPrometheus(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, preemptingFleet(39))
	// Two minutes of history at least: the comparison window is the 2m
	// interval's rate window (see tr below).
	env.Prom.WaitForSeries(t, `count_over_time(vllm:request_num_preemptions_count[3m]) >= 125`, 1, 240*time.Second)
	limited, older := env.Endpoints[0].Addr, env.Endpoints[1].Addr
	end := time.Now().Truncate(time.Second)
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: 2 * time.Minute, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: end.Add(-4 * time.Minute), To: end}}
	}
	resp := run(t, executor(t, env.Prom.URL),
		q("P", `{"queryType":"preemptions","perRequest":true,"grouping":"instance"}`),
		q("O", `{"queryType":"preemptions","perRequest":true,"grouping":"instance","instances":["`+older+`"]}`))
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
	}
	frames := byName(resp.Responses["P"].Frames)
	get := func(signal string) (time.Time, float64) {
		f, ok := frames[limited+" "+signal]
		require.True(t, ok, "frames %v", keys(frames))
		return lastValue(t, f)
	}
	at, moreThanOnce := get("preempted_more_than_once")
	_, atLeastOnceMax := get("preempted_at_least_once_max")
	_, mean := get("mean_preemptions")
	_, p99 := get("p99_preemptions")
	tr, slack := countedPreemptions(t, env, limited, at)
	// The tiny KV cache finishes about 1.5-2 requests a second wall-clock,
	// fewer on a loaded machine (a full CI run saw 93 in the window); the
	// shares are exact whatever the count, the p99's bucket needs some.
	require.GreaterOrEqual(t, len(tr), 50, "enough finished requests in the window")
	var sum, over1, atLeast1 float64
	for _, n := range tr {
		sum += float64(n)
		if n > 1 {
			over1++
		}
		if n >= 1 {
			atLeast1++
		}
	}
	n := float64(len(tr))
	t.Logf("extrapolation slack %.4f (relative)", slack)
	t.Logf("%d finished: more than once %.3f (sim %.3f), mean %.3f (sim %.3f), at least once ≤ %.3f (sim %.3f), p99 %.2f (sim %d)",
		len(tr), moreThanOnce, over1/n, mean, sum/n, atLeastOnceMax, atLeast1/n, p99, tr[int(0.99*n)])
	// The same requests: only the rates' extrapolation separates the
	// plugin's ratios from theirs (slack, relative).
	require.InDelta(t, over1/n, moreThanOnce, slack+1e-9, "le=1 and count cover the same requests")
	require.InDelta(t, sum/n, mean, slack*sum/n+1e-9, "sum and count cover the same requests")
	require.GreaterOrEqual(t, atLeastOnceMax+slack+1e-9, atLeast1/n, "an upper bound")
	require.GreaterOrEqual(t, atLeastOnceMax, moreThanOnce)
	lo, hi := bucketAround(float64(tr[int(0.99*n)]), []float64{1, 2, 3, 4, 5, 10, 20})
	require.True(t, p99 >= lo-1e-9 && p99 <= hi+1e-9, "p99 %.2f outside the true p99's bucket (%g, %g]", p99, lo, hi)
	for name := range frames {
		require.NotContains(t, name, older, "the older server has no request_num_preemptions: no series, not zeros")
	}
	require.Empty(t, resp.Responses["O"].Frames[0].Fields, "nothing for the older server alone")
	require.Contains(t, noticeTexts(resp.Responses["O"].Frames), "vllm:request_num_preemptions")
}

// countedPreemptions are the preemption counts of the requests the rate
// window [at-121s, at] (the 2m interval plus the 1 s scrape) counts on
// the 0.32 server: those request_num_preemptions observed between the
// window's first and last raw sample of its _count. The simulator observes
// every finished request (client aborts excluded: vLLM observes them
// nowhere) in the order of its request log, and a scrape never splits one
// step's finishes, so they are the log's requests ranked (first, last]:
// the requests themselves, not a guess at which ones a wall-clock window
// holds (on a loaded machine the scrapes drift from the wall clock by
// seconds, and with them a wall-clock window's edges).
//
// It also returns the most by which a ratio of two of the window's rates
// may differ, relatively, from the ratio of the increases the samples
// show: Prometheus extrapolates each rate from the sampled span by up to
// 1.1 average sample intervals at the start, less where a counter would
// reach zero sooner, which differs between _sum, _count and a bucket whose
// series started inside the window (a young engine).
func countedPreemptions(t *testing.T, env *fleettest.Env, addr string, at time.Time) ([]int, float64) {
	t.Helper()
	r := env.Prom.Query(t, fmt.Sprintf(`vllm:request_num_preemptions_count{instance=%q}[121s] @ %d`, addr, at.Unix()))
	require.Len(t, r, 1, "one _count series for the 0.32 server")
	var m struct {
		Values [][2]any `json:"values"`
	}
	require.NoError(t, json.Unmarshal(r[0], &m))
	require.GreaterOrEqual(t, len(m.Values), 2, "two samples in the window")
	n := len(m.Values)
	first, last := sampleInt(t, m.Values[0]), sampleInt(t, m.Values[n-1])
	// Prometheus extends a rate's sampled span toward the window's start
	// by the gap before the first sample when under 1.1 average intervals
	// (else by half of one), cut where the counter would reach zero; the
	// end extension is the same for every series of one scrape.
	slack := 1.1 / float64(n-1)
	var finished []int
	for _, c := range env.Fleet.CompletedRequests() {
		if c.Instance == 0 && !c.ClientAborted {
			finished = append(finished, c.Preemptions)
		}
	}
	require.GreaterOrEqual(t, len(finished), last, "the request log holds every request the counter counted")
	out := slices.Clone(finished[first:last])
	sort.Ints(out)
	return out, slack
}

// sampleInt is a raw sample's value, a count.
func sampleInt(t *testing.T, v [2]any) int {
	t.Helper()
	s, _ := v[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return int(f)
}

// bucketAround is the (lo, hi] bucket of bounds holding v.
func bucketAround(v float64, bounds []float64) (float64, float64) {
	lo := 0.0
	for _, b := range bounds {
		if v <= b {
			return lo, b
		}
		lo = b
	}
	return lo, lo * 2
}
