//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/sim"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// regimeFleet builds one single-engine instance per steady regime: under
// capacity, over capacity with KV to spare (a small batch ceiling, four
// times the arrivals it can serve), KV-starved (48 KV blocks: three or
// four sequences fill them, so running requests preempt each other) and
// idle (one arrival every 25 s).
func regimeFleet() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew = 11, 4, 0
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	over, starved := cfg.Engine, cfg.Engine
	over.MaxNumSeqs = 4
	starved.NumGPUBlocks, starved.MaxNumSeqs = 200, 32
	cfg.Instances = []sim.InstanceConfig{
		{Model: "under"},
		{Model: "over", RateFactor: 4, Engine: &over},
		{Model: "starved", RateFactor: 4, Engine: &starved},
		{Model: "idle", RateFactor: 0.01},
	}
	return cfg
}

// burstFleet is one engine with a ceiling of 8 that serves 3 requests/s
// easily but gets five times that for 3 s of every 15 s: the queue builds
// in each burst and drains after it.
func burstFleet() sim.Config {
	cfg := regimeFleet()
	cfg.Seed, cfg.Rate = 12, 3
	cfg.Profile = sim.Profile{Kind: sim.Bursts, Period: 15 * time.Second, Length: 3 * time.Second, Factor: 5}
	e := cfg.Engine
	e.MaxNumSeqs = 8
	cfg.Instances = []sim.InstanceConfig{{Model: "bursty", Engine: &e}}
	return cfg
}

// TestSaturationRegimes runs the saturation query through real Prometheus
// against fleets whose regime the test built, and checks each step's
// verdict against it: the steady regimes by construction, the bursty one
// against the simulator's true queue over each step's window. After the
// warm-up at least 95% of the steps must agree; the disagreeing steps are
// printed with their evidence.
func TestSaturationRegimes(t *testing.T) {
	t.Parallel()
	steady := fleettest.Run(t, regimeFleet())
	burst := fleettest.Run(t, burstFleet())
	srv := promtest.Start(t, promtest.Options{Targets: append(steady.Targets(), burst.Targets()...)})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 45`, 5, 150*time.Second)
	first := fleettest.FirstScrape(t, srv)
	from := first.Add(10 * time.Second) // warm-up: the regimes establish themselves, the first window fills
	to := time.Now().Truncate(time.Second)
	e := executor(t, srv.URL)
	resp := run(t, e, dq("A", `{"queryType":"saturation"}`, from, to))
	r := resp.Responses["A"]
	require.NoError(t, r.Error)

	want := map[string]string{
		steady.Endpoints[0].Addr: vllm.VerdictOK, steady.Endpoints[1].Addr: vllm.VerdictQueueing,
		steady.Endpoints[2].Addr: vllm.VerdictKVBound, steady.Endpoints[3].Addr: vllm.VerdictIdle,
	}
	names := map[string]string{steady.Endpoints[0].Addr: "under capacity", steady.Endpoints[1].Addr: "over capacity, KV to spare",
		steady.Endpoints[2].Addr: "KV-starved", steady.Endpoints[3].Addr: "idle", burst.Endpoints[0].Addr: "bursty"}
	frames := byName(r.Frames)
	for addr, regime := range names {
		t.Run(regime, func(t *testing.T) {
			tl := frames[addr+" verdict"]
			require.NotNil(t, tl, "no verdict timeline for %s; frames: %v", addr, keys(frames))
			expect := func(ts time.Time) string { return want[addr] }
			if regime == "bursty" {
				phase := scrapePhase(t, srv, addr)
				expect = func(ts time.Time) string { return burstTruth(burst, ts, phase) }
			}
			checkSteps(t, tl, expect, evidence(t, e, addr, from, to), regime == "bursty")
		})
	}
	t.Run("table verdicts and reasons", func(t *testing.T) {
		table := frames["saturation"]
		require.NotNil(t, table)
		got := map[string][2]string{}
		for i := 0; i < table.Rows(); i++ {
			got[table.Fields[0].At(i).(string)] = [2]string{table.Fields[1].At(i).(string), table.Fields[2].At(i).(string)}
		}
		tableWant := map[string]string{
			steady.Endpoints[0].Addr: vllm.VerdictOK, steady.Endpoints[1].Addr: vllm.VerdictOverloaded,
			steady.Endpoints[2].Addr: vllm.VerdictKVBound, steady.Endpoints[3].Addr: vllm.VerdictIdle, burst.Endpoints[0].Addr: vllm.VerdictQueueing,
		}
		for addr, v := range tableWant {
			require.Equal(t, v, got[addr][0], "%s (%s): reason %q", names[addr], addr, got[addr][1])
			require.Regexp(t, `\d`, got[addr][1], "the reason quotes numbers")
		}
	})
}

// checkSteps compares each step's verdict with the expected one and
// fails when fewer than 95% agree, listing the steps that do not. With
// edges, a step whose truth differs from a neighbour's is not judged: the
// verdict reads a rate window, so at a regime change it may take either
// side by one step.
func checkSteps(t *testing.T, tl *data.Frame, expect func(time.Time) string, ev func(time.Time) string, edges bool) {
	t.Helper()
	agree, total := 0, 0
	var disagree []string
	at := func(i int) time.Time { return tl.Fields[0].At(i).(time.Time) }
	for i := 0; i < tl.Rows(); i++ {
		ts := at(i)
		got, want := tl.Fields[1].At(i).(string), expect(ts)
		if edges && ((i > 0 && expect(at(i-1)) != want) || (i+1 < tl.Rows() && expect(at(i+1)) != want)) {
			continue
		}
		total++
		if got == want {
			agree++
			continue
		}
		disagree = append(disagree, fmt.Sprintf("%s: verdict %q, regime %q (%s)", ts.UTC().Format("15:04:05"), got, want, ev(ts)))
	}
	for _, d := range disagree {
		t.Logf("disagrees at %s", d)
	}
	t.Logf("%d of %d steps agree", agree, total)
	require.Greater(t, total, 20, "too few steps to judge")
	require.GreaterOrEqual(t, float64(agree)/float64(total), 0.95, "steps that disagree: %v", disagree)
}

// burstTruth is what the simulator says about the bursty engine over the
// rate window ending at ts: queueing when its true queue, read from the
// simulator's recorded state at the instants Prometheus scraped it in the
// window (phase: the scrapes' offset within the second), averages at least
// one request; ok otherwise.
func burstTruth(env *fleettest.Env, ts time.Time, phase time.Duration) string {
	var sum float64
	for k := 0; k < 4; k++ {
		s := nearest(env, ts.Add(-phase-time.Duration(k)*time.Second))
		if s == nil {
			return "unknown"
		}
		sum += float64(s.Engines[0].Waiting)
	}
	if sum/4 >= 1 {
		return vllm.VerdictQueueing
	}
	return vllm.VerdictOK
}

// scrapePhase is how far before a whole second the bursty target's
// scrapes land (Prometheus spreads targets' scrapes over the interval).
func scrapePhase(t *testing.T, srv *promtest.Server, addr string) time.Duration {
	var out struct {
		Value [2]any `json:"value"`
	}
	r := srv.Query(t, fmt.Sprintf(`timestamp(vllm:num_requests_running{instance=%q})`, addr))
	require.Len(t, r, 1)
	require.NoError(t, json.Unmarshal(r[0], &out))
	sec, err := strconv.ParseFloat(out.Value[1].(string), 64)
	require.NoError(t, err)
	frac := sec - math.Floor(sec)
	return time.Duration((1-frac)*float64(time.Second)) % time.Second
}

// nearest is the recorded snapshot closest to ts.
func nearest(env *fleettest.Env, ts time.Time) *sim.Snapshot {
	var best *sim.Snapshot
	d := time.Duration(math.MaxInt64)
	h := env.History()
	for i := range h {
		if x := h[i].Time.Sub(ts).Abs(); x < d {
			d, best = x, &h[i]
		}
	}
	if d > time.Second {
		return nil
	}
	return best
}

// evidence reads the instance's evidence series (as the saturation query
// computes them) through a promql query, to print beside a disagreeing step.
func evidence(t *testing.T, e *query.Executor, addr string, from, to time.Time) func(time.Time) string {
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	values := map[string]map[int64]float64{}
	for _, s := range b.SaturationSignals(models.GroupInstance, models.Filters{Instances: []string{addr}}, 4*time.Second) {
		js, _ := json.Marshal(map[string]string{"queryType": "promql", "expr": s.Expr})
		r := run(t, e, dq("A", string(js), from, to)).Responses["A"]
		values[s.Name] = map[int64]float64{}
		for _, f := range r.Frames {
			for i := 0; i < f.Rows() && len(f.Fields) > 1; i++ {
				if v, ok := f.Fields[1].ConcreteAt(i); ok {
					values[s.Name][f.Fields[0].At(i).(time.Time).UnixMilli()] = v.(float64)
				}
			}
		}
	}
	return func(ts time.Time) string {
		var parts []string
		for _, name := range []string{vllm.SatWaiting, vllm.SatRunning, vllm.SatRunningPeak, vllm.SatKVUsage, vllm.SatPreemptions, vllm.SatCompletions, vllm.SatQueued} {
			v, ok := values[name][ts.UnixMilli()]
			if !ok {
				v = math.NaN()
			}
			parts = append(parts, fmt.Sprintf("%s %.3g", name, v))
		}
		return strings.Join(parts, ", ")
	}
}
