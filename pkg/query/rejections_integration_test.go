//go:build !mutation

package query_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/sim"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rejectingFleet is a vLLM 0.32 server refusing at --max-num-queued-reqs
// (a small batch, four times the arrivals), an older V1 server with two
// engines and a V0 server, as during an upgrade.
func rejectingFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew = seed, 3, 0
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	limited := cfg.Engine
	limited.MaxNumSeqs, limited.MaxNumQueuedReqs = 4, 8
	cfg.Instances = []sim.InstanceConfig{
		{Model: "m", Engines: 1, Release: sim.Release032, RateFactor: 4, Engine: &limited},
		{Model: "m", Engines: 2},
		{Model: "m", Engines: 1, Generation: sim.V0},
	}
	return cfg
}

// TestRejectionsThroughPrometheus: on Prometheus 2 and 3 and
// VictoriaMetrics, the 0.32 server's refusals reach the
// queue (a rejected series by reason), the fleet table (rejected/s), the
// saturation verdict (rejecting — queue full) and Save & test (a warning),
// each rate within 20% of the simulator's count of refused requests over
// the same window; the older V1 and the V0 server answer every query with
// no rejected series and an empty (null, not zero) rejected/s cell.
func TestRejectionsThroughPrometheus(t *testing.T) {
	t.Parallel()
	env, servers := onEveryBackend(t, rejectingFleet(38), `count_over_time(vllm:admission_rejections_total[2m]) >= 75`)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) { checkRejections(t, env, servers[k]) })
	}
}

// checkRejections runs the queue, fleet, saturation and health answers of
// one back end against the simulator's count of refused requests.
func checkRejections(t *testing.T, env *fleettest.Env, srv *promtest.Server) {
	limited, older, v0 := env.Endpoints[0].Addr, env.Endpoints[1].Addr, env.Endpoints[2].Addr
	// On the step (the 30s interval), so the instant answers (fleet) and the
	// series' last point (queue) are at end. A 31s rate window, not 16s: the
	// refusals come in bursts, and a loaded machine's scrapes and snapshots
	// run late, so over 16s VictoriaMetrics read 8.8/s where the history
	// counted 6.6/s in one full CI run (Prometheus 2 and 3 were within 20%).
	end := time.Now().Truncate(30 * time.Second)
	const window = 31 * time.Second // $__rate_interval of a 30s interval over a 1s scrape
	q := func(ref, js string) backend.DataQuery {
		return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: 30 * time.Second, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: end.Add(-30 * time.Second), To: end}}
	}
	e := executor(t, srv.URL)
	resp := run(t, e,
		q("Q", `{"queryType":"queue","grouping":"instance"}`),
		q("F", `{"queryType":"fleet"}`),
		q("S", `{"queryType":"saturation","grouping":"instance","format":"table"}`))
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
	}
	truth := refusedRate(t, env, end, window)
	require.Greater(t, truth, 1.0, "the limited server refuses steadily")

	t.Run("queue", func(t *testing.T) {
		frames := byName(resp.Responses["Q"].Frames)
		f, ok := frames[limited+" rejected (max_num_queued_reqs)"]
		require.True(t, ok, "frames: %v", keys(frames))
		at, v := lastValue(t, f)
		want := refusedRate(t, env, at, window)
		t.Logf("queue: %.3f refused/s at %s, simulator %.3f", v, at.Format(time.TimeOnly), want)
		require.InEpsilon(t, want, v, 0.2)
		require.Equal(t, "reqps", f.Fields[1].Config.Unit)
		_, tokens := frames[limited+" rejected (max_num_queued_tokens)"]
		require.True(t, tokens, "the reason that never fired is a zero series, as the server exposes it")
		for name := range frames {
			if strings.Contains(name, "rejected") {
				require.True(t, strings.HasPrefix(name, limited+" "), "only the 0.32 server has rejections: %s", name)
			}
		}
		require.Contains(t, frames, older+" waiting")
		require.Contains(t, frames, v0+" waiting")
	})

	t.Run("fleet", func(t *testing.T) {
		table := resp.Responses["F"].Frames[0]
		rows := fleetCells(t, table, "rejected/s")
		require.Len(t, rows, 4, "one row per engine")
		for inst, v := range rows {
			if inst == limited+"/0" {
				require.NotNil(t, v)
				t.Logf("fleet: %.3f refused/s, simulator %.3f", *v, truth)
				require.InEpsilon(t, truth, *v, 0.2)
				continue
			}
			require.Nil(t, v, "%s has no rejection counter: empty, not zero", inst)
		}
		states := fleetStrings(t, table, "state")
		for inst, s := range states {
			require.Equal(t, "up", s, "%s: a missing rejection counter is not missing metrics", inst)
		}
	})

	t.Run("saturation", func(t *testing.T) {
		table := resp.Responses["S"].Frames[0]
		verdicts := fleetStrings(t, table, "verdict")
		require.Equal(t, vllm.VerdictRejecting, verdicts[limited+"/"], "verdicts %v, reasons %v", verdicts, fleetStrings(t, table, "reason"))
		for inst, v := range verdicts {
			if inst != limited+"/" {
				require.NotEqual(t, vllm.VerdictRejecting, v, inst)
			}
		}
		reasons := fleetStrings(t, table, "reason")
		peak := regexp.MustCompile(`waiting \+ running up to ([0-9.]+) `).FindStringSubmatch(reasons[limited+"/"])
		require.NotNil(t, peak, reasons[limited+"/"])
		v, err := strconv.ParseFloat(peak[1], 64)
		require.NoError(t, err)
		require.InDelta(t, 7.5, v, 1, "means over the window of waiting + running, just under --max-num-queued-reqs 8")
	})

	t.Run("health", func(t *testing.T) {
		s, err := models.ParseSettings(models.Instance{URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)})
		require.NoError(t, err)
		c, err := prom.New(prom.Options{URL: s.URL, Timeout: s.QueryTimeout})
		require.NoError(t, err)
		res := health.Check(context.Background(), c, s, time.Now())
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "Warning: 1 server(s) refused requests at their queue limit")
		require.Contains(t, res.Message, limited+" ")
		require.NotContains(t, res.Message, older+" ")
	})
}

// refusedRate is the simulator's refused requests per second on the limited
// server over the window before end, from the recorded snapshots.
func refusedRate(t *testing.T, env *fleettest.Env, end time.Time, window time.Duration) float64 {
	t.Helper()
	refused := func(s sim.Snapshot) float64 {
		var n int64
		for _, es := range s.Engines {
			if es.Instance == 0 {
				n += es.AdmissionRejected["max_num_queued_reqs"]
			}
		}
		return float64(n)
	}
	// at interpolates the count between the snapshots either side of ts,
	// so that a snapshot taken late (a loaded machine) does not move the
	// window's edge.
	at := func(ts time.Time) (float64, bool) {
		var before, after *sim.Snapshot
		hist := env.History()
		for i := range hist {
			if !hist[i].Time.After(ts) {
				before = &hist[i]
			} else if after == nil {
				after = &hist[i]
			}
		}
		if before == nil {
			return 0, false
		}
		if after == nil {
			return refused(*before), true
		}
		f := ts.Sub(before.Time).Seconds() / after.Time.Sub(before.Time).Seconds()
		return refused(*before) + f*(refused(*after)-refused(*before)), true
	}
	a, ok1 := at(end.Add(-window))
	b, ok2 := at(end)
	require.True(t, ok1 && ok2)
	return (b - a) / window.Seconds()
}

// fleetCells maps "instance/engine" to a numeric cell of a table.
func fleetCells(t *testing.T, table *data.Frame, column string) map[string]*float64 {
	t.Helper()
	col, _ := table.FieldByName(column)
	require.NotNil(t, col, column)
	out := map[string]*float64{}
	for i := 0; i < table.Rows(); i++ {
		var v *float64
		if x, ok := col.ConcreteAt(i); ok {
			f := x.(float64)
			v = &f
		}
		out[rowKey(table, i)] = v
	}
	return out
}

// fleetStrings maps "instance/engine" to a text cell of a table.
func fleetStrings(t *testing.T, table *data.Frame, column string) map[string]string {
	t.Helper()
	col, _ := table.FieldByName(column)
	require.NotNil(t, col, column)
	out := map[string]string{}
	for i := 0; i < table.Rows(); i++ {
		out[rowKey(table, i)] = col.At(i).(string)
	}
	return out
}

func rowKey(table *data.Frame, i int) string {
	inst, _ := table.FieldByName("instance")
	key := inst.At(i).(string) + "/"
	if eng, _ := table.FieldByName("engine"); eng != nil {
		key += eng.At(i).(string)
	}
	return key
}
