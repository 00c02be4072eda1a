//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// TestRolesAndKVTransfer runs the role grouping and the kvTransfer query
// through real Prometheus scraping a disaggregated simulated fleet (two
// prefill and two decode instances, labelled llm_isvc_role as KServe does),
// injects KV-transfer failures into one decode instance and compares what
// the plugin shows with the simulator's truth. A second Prometheus scrapes
// the same fleet without role labels.
func TestRolesAndKVTransfer(t *testing.T) {
	t.Parallel()
	cfg := fleettest.PDFleet(31)
	cfg.Engine.KVExpireRate = 0 // only injected failures move the counters
	env := fleettest.StartRoles(t, cfg)
	bare := env.Also(t, promtest.Prometheus2)
	const decode, injected = 2, 3
	addr := env.Endpoints[decode].Addr
	env.Prom.WaitForSeries(t, `vllm:nixl_xfer_time_seconds_count{llm_isvc_role="decode"} > 0`, 4, 90*time.Second)
	env.Prom.WaitForSeries(t, fmt.Sprintf(`count_over_time(vllm:nixl_num_failed_transfers_total{instance=%q}[1m]) >= 5`, addr), 2, 30*time.Second)
	failed := fmt.Sprintf(`sum(vllm:nixl_num_failed_transfers_total{instance=%q})`, addr)
	startFails := kvFailures(env.Fleet.Snapshot(), decode)
	require.Equal(t, startFails, int64(instant(t, env.Prom, failed)), "no failure before the injection")
	injectedAt := time.Now()
	require.NoError(t, env.Fleet.FailKVTransfers(decode, injected))
	require.Eventually(t, func() bool { return kvFailures(env.Fleet.Snapshot(), decode) == startFails+injected },
		60*time.Second, 100*time.Millisecond, "the decode instance pulls KV for new requests, which fail")
	require.Eventually(t, func() bool { return instant(t, env.Prom, failed) == float64(startFails+injected) },
		30*time.Second, 200*time.Millisecond, "Prometheus scrapes the failures")
	time.Sleep(2 * time.Second)
	to := time.Now()

	t.Run("the injected failures counted exactly through Prometheus", func(t *testing.T) {
		window := int(math.Ceil(to.Sub(injectedAt).Seconds())) + 1
		inc := instant(t, env.Prom, fmt.Sprintf(`%s - %s`, failed, fmt.Sprintf(`sum(vllm:nixl_num_failed_transfers_total{instance=%q} offset %ds)`, addr, window)))
		require.Equal(t, float64(injected), inc, "window %ds: now %v, then %v", window, instant(t, env.Prom, failed),
			instant(t, env.Prom, fmt.Sprintf(`sum(vllm:nixl_num_failed_transfers_total{instance=%q} offset %ds)`, addr, window)))
	})
	e := executor(t, env.Prom.URL)
	resp := run(t, e,
		dq("kv", `{"queryType":"kvTransfer"}`, env.Started, to),
		dq("role", `{"queryType":"queue","grouping":"role"}`, env.Started, to),
		dq("none", `{"queryType":"queue","grouping":"none"}`, env.Started, to),
		dq("inst", `{"queryType":"queue","grouping":"instance"}`, env.Started, to),
		dq("fleet", `{"queryType":"fleet"}`, env.Started, to),
		dq("sat", `{"queryType":"saturation","grouping":"role","format":"table"}`, env.Started, to))
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
	}
	t.Run("kvTransfer by role", func(t *testing.T) {
		fs := byName(resp.Responses["kv"].Frames)
		for _, name := range []string{"decode p50", "decode p90", "decode p99", "decode transfers", "decode bytes", "decode failed_transfers",
			"decode failed_notifications", "prefill failed_transfers", "prefill transfers"} {
			require.Contains(t, fs, name, "frames: %v", frameNames(fs))
		}
		require.Equal(t, "decode", fs["decode failed_transfers"].Fields[1].Labels["role"])
		require.Greater(t, maxOf(fs["decode failed_transfers"]), 0.0, "the injected failures show as a rate")
		require.Equal(t, 0.0, maxOf(fs["prefill failed_transfers"]), "prefill engines pull no KV")
		require.Equal(t, 0.0, maxOf(fs["prefill transfers"]))
		require.Greater(t, maxOf(fs["decode transfers"]), 0.0)
		p99 := maxOf(fs["decode p99"])
		require.True(t, p99 > 0 && p99 <= 5, "transfer-time p99 %v inside vLLM's buckets", p99)
		snap := env.Fleet.Snapshot()
		var bytes, transfers int64
		for _, s := range snap.Engines {
			bytes, transfers = bytes+s.KVBytes, transfers+s.KVTransfers
		}
		require.Positive(t, transfers)
		perTransfer := lastOf(fs["decode bytes"]) / lastOf(fs["decode transfers"])
		require.InDelta(t, float64(bytes)/float64(transfers), perTransfer, float64(bytes)/float64(transfers),
			"bytes per transfer has the simulator's order of magnitude")
		require.NotContains(t, noticeTexts(resp.Responses["kv"].Frames), "no role label")
	})
	t.Run("queue by role sums to the fleet's total", func(t *testing.T) {
		roles := byName(resp.Responses["role"].Frames)
		total := byName(resp.Responses["none"].Frames)
		inst := byName(resp.Responses["inst"].Frames)
		for _, sig := range []string{"running", "waiting"} {
			// Step by step; a group without a series at a step adds 0 there
			// (at the fleet's first steps some instances are not scraped yet,
			// so the groups need not have the same steps).
			require.Contains(t, roles, "prefill "+sig)
			require.Contains(t, roles, "decode "+sig)
			require.Contains(t, total, sig)
			p, d, all := byTime(roles["prefill "+sig]), byTime(roles["decode "+sig]), byTime(total[sig])
			require.GreaterOrEqual(t, len(all), 5, "%s: enough steps to compare", sig)
			for ts := range p {
				require.Contains(t, all, ts, "%s: a prefill step the total lacks", sig)
			}
			for ts := range d {
				require.Contains(t, all, ts, "%s: a decode step the total lacks", sig)
			}
			for ts, v := range all {
				require.InDelta(t, v, p[ts]+d[ts], 1e-9, "%s at %d", sig, ts)
			}
			dec := map[int64]float64{}
			for _, ep := range env.Endpoints {
				if ep.Role != sim.RoleDecode {
					continue
				}
				for ts, v := range byTime(inst[ep.Addr+" "+sig]) {
					dec[ts] += v
				}
			}
			require.Equal(t, dec, byTime(roles["decode "+sig]), "decode %s is the sum of the decode instances, step by step", sig)
		}
	})
	t.Run("fleet has each engine's role", func(t *testing.T) {
		rows := fleetRows(t, resp.Responses["fleet"].Frames[0])
		require.Len(t, rows, 8)
		for _, row := range rows {
			for _, ep := range env.Endpoints {
				if ep.Addr == row["instance"] {
					require.Equal(t, ep.Role, row["role"], "%v", row)
				}
			}
		}
	})
	t.Run("saturation has a verdict per role pool", func(t *testing.T) {
		table := resp.Responses["sat"].Frames[0]
		require.Equal(t, "role", table.Fields[0].Name)
		require.Equal(t, []string{"decode", "prefill"}, stringsOf(table.Fields[0]))
	})
	t.Run("without role labels: one group and a notice", func(t *testing.T) {
		r := run(t, executor(t, bare.URL), dq("A", `{"queryType":"queue","grouping":"role"}`, env.Started, to)).Responses["A"]
		require.NoError(t, r.Error)
		fs := byName(r.Frames)
		require.Contains(t, fs, "running", "one group, named by its signal: %v", frameNames(fs))
		require.Contains(t, fs, "waiting")
		require.Contains(t, noticeTexts(r.Frames), "no role label on the series: looked for llm_isvc_role, llm_d_ai_role")
	})
}

// kvFailures is the instance's failed transfers by the simulator's truth.
func kvFailures(s sim.Snapshot, instance int) int64 {
	var n int64
	for _, e := range s.Engines {
		if e.Instance == instance {
			n += e.KVTransferFailures
		}
	}
	return n
}

// instant is the value of a one-series instant query, NaN without one.
func instant(t *testing.T, p *promtest.Server, expr string) float64 {
	t.Helper()
	res := p.Query(t, expr)
	if len(res) == 0 {
		return math.NaN()
	}
	var s struct {
		Value [2]any `json:"value"`
	}
	require.NoError(t, json.Unmarshal(res[0], &s))
	v, err := strconv.ParseFloat(s.Value[1].(string), 64)
	require.NoError(t, err)
	return v
}

func values(f *data.Frame) []float64 {
	if f == nil {
		return nil
	}
	out := make([]float64, f.Fields[1].Len())
	for i := range out {
		v, _ := f.Fields[1].FloatAt(i)
		out[i] = v
	}
	return out
}

// byTime is a series' values by their time (unix ms).
func byTime(f *data.Frame) map[int64]float64 {
	out := map[int64]float64{}
	for i := range f.Fields[0].Len() {
		ts, _ := f.Fields[0].ConcreteAt(i)
		v, _ := f.Fields[1].FloatAt(i)
		out[ts.(time.Time).UnixMilli()] = v
	}
	return out
}

func maxOf(f *data.Frame) float64 {
	m := math.Inf(-1)
	for _, v := range values(f) {
		if !math.IsNaN(v) && v > m {
			m = v
		}
	}
	return m
}

func lastOf(f *data.Frame) float64 {
	vs := values(f)
	return vs[len(vs)-1]
}

func stringsOf(f *data.Field) []string {
	out := make([]string, f.Len())
	for i := range out {
		v, _ := f.ConcreteAt(i)
		out[i], _ = v.(string)
	}
	return out
}

func frameNames(m map[string]*data.Frame) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
