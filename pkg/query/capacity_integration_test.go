//go:build !mutation

package query_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// capacityEngine is an engine small enough to saturate at a few requests
// per second: 16 sequences at most, so a replica sustains about 4.5
// requests/s of the default lengths.
func capacityEngine() sim.EngineParams {
	p := sim.DefaultEngineParams()
	p.MaxNumSeqs = 16
	p.AbortRate = 0
	return p
}

// capacityKeeps are the sample names the capacity query reads.
func capacityKeeps(name string) bool {
	for _, n := range []string{"request_success", "num_requests_waiting", "num_requests_running", "prompt_tokens",
		"generation_tokens", "inter_token_latency", "time_per_output_token", "request_prefill_time", "request_prompt_tokens",
		"request_generation_tokens", "request_queue_time", "time_to_first_token", "cache_config_info", "iteration_tokens", "prefix_cache"} {
		if strings.Contains(name, n) {
			return true
		}
	}
	return false
}

// trueThroughput is what one engine of p finishes per second when it is
// never short of work: one instance offered far more than it can take,
// its finished requests counted over the last 10 of 20 simulated minutes.
func trueThroughput(t *testing.T, p sim.EngineParams) float64 {
	cfg := sim.DefaultConfig()
	cfg.Skew, cfg.Rate, cfg.Engine, cfg.RequestLog = 0, 40, p, 1_000_000
	cfg.Engine.MaxWaiting = 0
	cfg.Instances = []sim.InstanceConfig{{Model: "m"}}
	f, err := sim.NewFleet(cfg)
	require.NoError(t, err)
	require.NoError(t, f.Advance(20*time.Minute))
	n := 0
	for _, r := range f.CompletedRequests() {
		if r.Finished > 10*time.Minute && !r.ClientAborted {
			n++
		}
	}
	return float64(n) / 600
}

// TestCapacityAgainstTheSimulatorsTruth: three replicas of one model get
// bursts of traffic above what a replica sustains (2.5 requests/s per
// engine, doubled for 5 of every 15 minutes: 10 requests/s across the
// fleet on average). From Prometheus' history alone, the capacity query
// must read the demand within 10% of the offered rate, one replica's
// sustainable throughput within 15% of a saturated engine's measured
// throughput, three replicas now, and a closed form that covers the
// demand with its headroom.
func TestCapacityAgainstTheSimulatorsTruth(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate, cfg.Engine, cfg.RequestLog = 11, 0, 2.5, capacityEngine(), 1000
	cfg.Profile = sim.Profile{Kind: sim.Bursts, Factor: 2, Length: 5 * time.Minute, Period: 15 * time.Minute}
	cfg.Instances = []sim.InstanceConfig{{Model: "m"}, {Model: "m"}, {Model: "m"}}
	h := runSimHistory(t, promtest.Prometheus2, cfg, 2*time.Hour, 15*time.Second, capacityKeeps)
	e := settingsExecutor(t, h.Prom.URL, `{"scrapeInterval":"15s","gpusPerServer":2,"gpuHourlyCost":3}`)
	from := h.End.Add(-90 * time.Minute)
	r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"capacity","format":"table"}`),
		Interval: time.Minute, MaxDataPoints: 90, TimeRange: backend.TimeRange{From: from, To: h.End}}).Responses["A"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1)
	row := tableRow(t, r.Frames[0], 0)
	require.Equal(t, "m", row["model"])
	require.EqualValues(t, 3, row["replicas now"])
	require.InEpsilon(t, 10.0, row["arrivals"], 0.10, "offered 10 requests/s on average")
	truth := trueThroughput(t, cfg.Engine)
	t.Logf("per replica: measured %.3f req/s from %v saturated steps, truth %.3f req/s", row["per replica"], row["saturated steps"], truth)
	require.InEpsilon(t, truth, row["per replica"], 0.15)
	require.Equal(t, false, row["per replica is a lower bound"])
	desired := row["desired replicas"].(int64)
	require.GreaterOrEqual(t, float64(desired)*row["per replica"].(float64), row["arrivals now"].(float64)*1.2)
	require.Greater(t, row["queue_time p99 measured"], 0.0, "bursts above capacity queue requests")
	// Efficiency: 3 servers × 2 GPUs make the generated tokens; priced at 3 an hour.
	require.EqualValues(t, 2, row["GPUs per server"])
	require.InEpsilon(t, row["generated tokens/s"], row["tokens/s per GPU"].(float64)*2*3, 0.03)
	require.InEpsilon(t, 1e6/row["tokens/s per GPU"].(float64), row["GPU-s per M tokens"], 1e-9)
	require.InEpsilon(t, row["GPU-s per M tokens"].(float64)*3/3600, row["cost per M tokens"], 1e-9)
	require.Less(t, row["idle share"], 0.05, "never idle at 2.5 requests/s per engine")
}

// tableRow reads row i of a table frame by column name, pointers followed
// (nil for a null cell).
func tableRow(t *testing.T, f *data.Frame, i int) map[string]any {
	t.Helper()
	require.Greater(t, f.Rows(), i)
	out := map[string]any{}
	for _, fld := range f.Fields {
		v, ok := fld.ConcreteAt(i)
		if !ok {
			out[fld.Name] = nil
			continue
		}
		out[fld.Name] = v
	}
	return out
}

// TestCapacityIdleShareAgainstTheSimulator: of two servers of one model,
// one gets all the traffic and the other almost none: half the servers'
// time is idle, and the idle cost is that half of the GPU-hours priced.
func TestCapacityIdleShareAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate, cfg.Engine = 5, 0, 2, capacityEngine()
	cfg.Instances = []sim.InstanceConfig{{Model: "m"}, {Model: "m", RateFactor: 1e-5}}
	h := runSimHistory(t, promtest.Prometheus2, cfg, 70*time.Minute, 15*time.Second, capacityKeeps)
	e := settingsExecutor(t, h.Prom.URL, `{"scrapeInterval":"15s","gpuHourlyCost":2}`)
	r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"capacity","format":"table"}`),
		Interval: time.Minute, MaxDataPoints: 60, TimeRange: backend.TimeRange{From: h.End.Add(-time.Hour), To: h.End}}).Responses["A"]
	require.NoError(t, r.Error)
	row := tableRow(t, r.Frames[0], 0)
	require.InDelta(t, 0.5, row["idle share"], 0.03)
	require.EqualValues(t, 1, row["GPUs per server"], "the default")
	// 2 servers × 1 GPU × 1 h × the idle share × 2 an hour.
	require.InEpsilon(t, 2*row["idle share"].(float64)*2, row["idle cost"], 0.03)
}
