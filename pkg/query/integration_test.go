//go:build !mutation

// The integration tier: real Prometheus scraping a simulated fleet. It runs
// in every normal "go test"; scripts/mutation.sh sets the mutation tag so
// each mutant runs only the unit tier (see docs/development.md, Mutation score).

package query_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/resources"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// TestHotFleet runs every query type against real Prometheus scraping a
// simulated fleet with one hot instance and checks the answers against the
// simulator's true state.
//
// One simulated fleet is scraped by every back end (Debian's Prometheus 2,
// Prometheus 3, VictoriaMetrics), and each must give the same answers.
func TestHotFleet(t *testing.T) {
	t.Parallel()
	env, servers := onEveryBackend(t, fleettest.HotFleet(7), `count_over_time(vllm:num_preemptions_total[1m]) >= 18`)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) { checkHotFleet(t, env, servers[k]) })
	}
}

// onEveryBackend starts the fleet scraped by every back end and waits
// until each holds one series matching ready.
func onEveryBackend(t *testing.T, cfg sim.Config, ready string) (*fleettest.Env, map[promtest.Kind]*promtest.Server) {
	env := fleettest.Start(t, cfg)
	servers := map[promtest.Kind]*promtest.Server{promtest.Prometheus2: env.Prom}
	for _, k := range promtest.Kinds()[1:] {
		servers[k] = env.Also(t, k)
	}
	for _, k := range promtest.Kinds() {
		servers[k].WaitForSeries(t, ready, 1, 90*time.Second)
	}
	return env, servers
}

func checkHotFleet(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	hot := env.Endpoints[0].Addr
	to := time.Now()
	from := env.Started
	e := executor(t, srv.URL)
	// The simulator runs a few seconds before Prometheus first scrapes it;
	// what happened then is in no series, so comparisons start after it.
	firstScrape := fleettest.FirstScrape(t, srv)

	t.Run("queue matches the simulator within one scrape", func(t *testing.T) {
		resp := run(t, e, dq("A", `{"queryType":"queue","grouping":"instance"}`, from, to))
		r := resp.Responses["A"]
		require.NoError(t, r.Error)
		frames := byName(r.Frames)
		hotWaiting := frames[hot+" waiting"]
		require.NotNil(t, hotWaiting, "frames: %v", keys(frames))
		require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "vllm:num_requests_waiting")
		checked := 0
		for i := 0; i < hotWaiting.Rows(); i++ {
			ts := hotWaiting.Fields[0].At(i).(time.Time)
			v := hotWaiting.Fields[1].At(i).(float64)
			// A scrape catches the engines up to the instant it runs, while
			// the history is snapshotted on the simulator's tick, which lags
			// on a busy machine: look a few seconds past the step as well.
			lo, hi, ok := env.WaitingRange(0, ts.Add(-3*time.Second), ts.Add(3*time.Second))
			if !ok {
				continue
			}
			require.True(t, float64(lo) <= v && v <= float64(hi), "at %s Prometheus says %v waiting, simulator had %d..%d", ts, v, lo, hi)
			checked++
		}
		require.Greater(t, checked, 5)
		for _, ep := range env.Endpoints {
			require.Contains(t, frames, ep.Addr+" running")
		}
	})

	t.Run("topk: hot instance is rank 1 and exactly k series come back", func(t *testing.T) {
		for _, k := range []int{1, 2, 3} {
			for _, span := range []time.Duration{10 * time.Second, to.Sub(from)} {
				js := `{"queryType":"topk","rankBy":"waiting","aggregation":"max","k":` + itoa(k) + `}`
				r := run(t, e, dq("T", js, to.Add(-span), to)).Responses["T"]
				require.NoError(t, r.Error)
				table := r.Frames[len(r.Frames)-1]
				require.Equal(t, "topk", table.Name)
				require.Equal(t, k, table.Rows())
				require.Equal(t, hot, table.Fields[1].At(0))
				require.Len(t, r.Frames, k+1, "k=%d span=%s", k, span)
			}
		}
	})

	t.Run("preemption annotations match the simulator's preemption times", func(t *testing.T) {
		r := run(t, e, dq("Anno", `{"queryType":"preemptions"}`, from, to)).Responses["Anno"]
		require.NoError(t, r.Error)
		f := r.Frames[0]
		require.Greater(t, f.Rows(), 0, "the hot instance preempts")
		step := time.Second
		events := env.Fleet.PreemptionEvents()
		matched := 0
		for _, ev := range events {
			if ev.Time.Before(firstScrape.Add(2*step)) || ev.Time.After(to.Add(-3*step)) {
				continue
			}
			require.True(t, covered(f, ev.Addr, ev.Time, 2*step), "simulator preemption at %s on %s engine %d has no annotation within one step", ev.Time, ev.Addr, ev.Engine)
			matched++
		}
		require.Greater(t, matched, 0)
		for i := 0; i < f.Rows(); i++ {
			require.Contains(t, f.Fields[2].At(i).(string), hot)
			require.Contains(t, f.Fields[3].At(i).(string), "KV cache")
		}
	})

	t.Run("wait quantiles agree with the simulator's recorded waits", func(t *testing.T) {
		js := `{"queryType":"waitTime","quantiles":[0.5,0.9],"grouping":"instance","interval":"15s","instances":["` + hot + `"]}`
		// The back end must hold the hot engine's samples up to the range's
		// end: on a loaded machine a store's ingestion lags (VictoriaMetrics
		// answered from a window seconds old, while the hot queue grew, in a
		// full run), and the last step's rate would cover an older period.
		srv.WaitForSeries(t, fmt.Sprintf(`timestamp(vllm:request_queue_time_seconds_count{instance=%q}) >= %d`, hot, to.Unix()), 1, 30*time.Second)
		r := run(t, e, dq("W", js, to.Add(-30*time.Second), to)).Responses["W"]
		require.NoError(t, r.Error)
		frames := byName(r.Frames)
		p50 := frames[hot+" p50"]
		require.NotNil(t, p50, "frames: %v", keys(frames))
		last := p50.Rows() - 1
		ts := p50.Fields[0].At(last).(time.Time)
		got := p50.Fields[1].At(last).(float64)
		// The rate window is step 15s + scrape 1s; VictoriaMetrics also
		// takes the sample before it (17s). The simulator's history is
		// stamped on its own tick, which lags a scrape by seconds on a busy
		// machine, and the hot engine's waits grow fast, so the simulator's
		// p50 is taken over windows ending up to 3s either side of the
		// step: the histogram's p50 must fall within one bucket of them.
		var wants []float64
		for _, window := range []time.Duration{16 * time.Second, 17 * time.Second} {
			for shift := -3 * time.Second; shift <= 3*time.Second; shift += time.Second {
				if w, n := simulatedP50(env, ts.Add(shift), window, firstScrape); n > 10 {
					wants = append(wants, w)
				}
			}
		}
		require.NotEmpty(t, wants, "the simulator completed too few requests on the hot instance")
		sort.Float64s(wants)
		lo, hi := wants[0], wants[len(wants)-1]
		b := bucketIndex(got)
		require.True(t, bucketIndex(lo)-1 <= b && b <= bucketIndex(hi)+1, "histogram p50 %.3fs is more than one bucket from the simulator's p50 %.3fs..%.3fs", got, lo, hi)
		require.NotEmpty(t, r.Frames[0].Meta.Notices)
	})

	t.Run("the simulator is scraped without errors or protocol fallbacks", func(t *testing.T) {
		up := srv.Query(t, `up{job="vllm"} == 1`)
		require.Len(t, up, len(env.Endpoints))
		log := srv.Log(t)
		for _, bad := range []string{"fallback", "Content-Type", "content type", "scrape failed", "Failed to scrape"} {
			require.NotContains(t, log, bad, "%s log", srv.Backend)
		}
	})

	t.Run("resource routes", func(t *testing.T) {
		c, err := prom.New(prom.Options{URL: srv.URL})
		require.NoError(t, err)
		h := (&resources.Handler{Prom: c, Settings: e.Settings, Now: time.Now}).Mux()
		for path, want := range map[string]string{
			"/models":                  `["Qwen/Qwen2.5-7B-Instruct","meta-llama/Llama-3.1-8B-Instruct"]`,
			"/engines?instance=" + hot: `["0","1"]`,
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.JSONEq(t, want, rec.Body.String(), path)
		}
	})

	t.Run("bad queries fail alone", func(t *testing.T) {
		resp := run(t, e,
			dq("ok", `{"queryType":"queue"}`, from, to),
			dq("q", `{"queryType":"waitTime","quantiles":[1.5]}`, from, to),
			dq("k", `{"queryType":"topk","k":0}`, from, to),
			dq("j", `{"queryType":`, from, to),
			dq("u", `{"queryType":"nope"}`, from, to),
			dq("inj", `{"queryType":"queue","models":["\"} or vector(1) #"]}`, from, to),
			dq("raw", `{"queryType":"promql","expr":"sum by (model_name) (rate(vllm:generation_tokens_total[$__rate_interval]))"}`, from, to),
			dq("rawbad", `{"queryType":"promql","expr":"sum(rate(x[5m]"}`, from, to),
		)
		require.NoError(t, resp.Responses["raw"].Error)
		require.Len(t, resp.Responses["raw"].Frames, 2, "one series per model")
		require.Contains(t, resp.Responses["raw"].Frames[0].Meta.ExecutedQueryString, "[4s]", "$__rate_interval resolved: max(1s+1s, 4×1s)")
		require.Contains(t, resp.Responses["raw"].Frames[0].Name, "model_name=")
		require.ErrorContains(t, resp.Responses["rawbad"].Error, "Prometheus rejected the expression")
		require.Equal(t, backend.ErrorSourceDownstream, resp.Responses["rawbad"].ErrorSource)
		require.NoError(t, resp.Responses["ok"].Error)
		require.ErrorContains(t, resp.Responses["q"].Error, "quantile 1.5 is out of range (0, 1)")
		require.ErrorContains(t, resp.Responses["k"].Error, "k 0 is out of range")
		require.ErrorContains(t, resp.Responses["j"].Error, "malformed query JSON")
		require.ErrorContains(t, resp.Responses["u"].Error, `queryType "nope" is unknown`)
		require.NoError(t, resp.Responses["inj"].Error)
		require.Len(t, resp.Responses["inj"].Frames, 1, "an injected value must match nothing, not everything")
		require.Empty(t, resp.Responses["inj"].Frames[0].Fields)
	})
}

// TestMixedFleet checks that a fleet mixing V0 and V1 engines answers on
// both generations' names.
func TestMixedFleet(t *testing.T) {
	t.Parallel()
	env := fleettest.Start(t, fleettest.MixedFleet(11))
	v0 := env.Endpoints[1].Addr
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 12`, 5, 60*time.Second)
	to := time.Now()
	e := executor(t, env.Prom.URL)
	resp := run(t, e,
		dq("Q", `{"queryType":"queue","grouping":"instance"}`, env.Started, to),
		dq("I", `{"queryType":"waitTime","family":"itl","grouping":"instance"}`, env.Started, to),
		dq("K", `{"queryType":"topk","rankBy":"kv_usage","k":3}`, env.Started, to),
	)
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
	}
	q := byName(resp.Responses["Q"].Frames)
	require.Contains(t, q, v0+" swapped", "V0 instance exposes num_requests_swapped")
	require.Contains(t, q, env.Endpoints[0].Addr+" waiting (capacity)")
	itl := byName(resp.Responses["I"].Frames)
	require.Contains(t, itl, v0+" p99", "V0 time_per_output_token_seconds is read as inter-token latency")
	require.Contains(t, itl, env.Endpoints[0].Addr+" p99")
	require.Equal(t, 3, resp.Responses["K"].Frames[len(resp.Responses["K"].Frames)-1].Rows(), "KV usage unions V0 and V1 names")
}

// covered reports whether an annotation on instance spans t within tol.
func covered(f *data.Frame, instance string, t time.Time, tol time.Duration) bool {
	for i := 0; i < f.Rows(); i++ {
		start, end := f.Fields[0].At(i).(time.Time), f.Fields[1].At(i).(time.Time)
		title := f.Fields[2].At(i).(string)
		if strings.Contains(title, instance) && !t.Before(start.Add(-tol)) && !t.After(end.Add(tol)) {
			return true
		}
	}
	return false
}

var queueBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}

// simulatedP50 is the median queue time of the hot instance's requests that
// finished in (end-window, end] after the first scrape, and how many there were.
func simulatedP50(env *fleettest.Env, end time.Time, window time.Duration, firstScrape time.Time) (float64, int) {
	var waits []float64
	for _, c := range env.Fleet.CompletedRequests() {
		fin := env.Fleet.WallTime(c.Finished)
		if c.Instance == 0 && fin.After(end.Add(-window)) && fin.After(firstScrape) && !fin.After(end) {
			waits = append(waits, c.QueueTime.Seconds())
		}
	}
	if len(waits) == 0 {
		return 0, 0
	}
	sort.Float64s(waits)
	return waits[len(waits)/2], len(waits)
}

// bucketIndex is the index of the queue-time bucket v falls in.
func bucketIndex(v float64) int { return sort.SearchFloat64s(queueBuckets, v) }

func keys(m map[string]*data.Frame) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
