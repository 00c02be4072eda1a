package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLeanFleetRunsTheSameFleet runs one fleet twice, lean and full: the
// queue-time and TTFT histograms, the counters and the gauges must be the
// same (lean skips observations, never a random draw), and the lean one's
// other histograms must be empty.
func TestLeanFleetRunsTheSameFleet(t *testing.T) {
	run := func(lean bool) (*Fleet, Snapshot) {
		cfg := DefaultConfig()
		cfg.Rate, cfg.Lean = 12, lean
		cfg.Instances = []InstanceConfig{{Model: "m"}, {Model: "m"}}
		f, err := NewFleet(cfg)
		require.NoError(t, err)
		require.NoError(t, f.Advance(2*time.Minute))
		return f, f.Snapshot()
	}
	full, fullSnap := run(false)
	lean, leanSnap := run(true)
	fq, ft := full.LatencyCounts()
	lq, lt := lean.LatencyCounts()
	require.Equal(t, fq, lq, "queue-time histogram")
	require.Equal(t, ft, lt, "TTFT histogram")
	require.NotZero(t, fq[0]+fq[1], "the fleet finished requests")
	for i := range fullSnap.Engines {
		fullSnap.Engines[i].Addr, leanSnap.Engines[i].Addr = "", ""
	}
	require.Equal(t, fullSnap.Engines, leanSnap.Engines, "counters and gauges")
	for _, e := range lean.engines {
		require.Zero(t, e.h.itl.count, "inter-token latency observed on a lean engine")
		require.Zero(t, e.h.e2e.count, "e2e observed on a lean engine")
		require.Zero(t, e.h.iteration.count, "iteration tokens observed on a lean engine")
	}
	require.NotZero(t, full.engines[0].h.itl.count)
}

// TestLatencyCountsSumTheEngines checks the summed histograms against the
// request log: every finished request's queue time counted once, in its
// bucket.
func TestLatencyCountsSumTheEngines(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rate, cfg.RequestLog = 8, 100000
	cfg.Instances = []InstanceConfig{{Model: "m"}, {Model: "m"}, {Model: "n"}}
	f, err := NewFleet(cfg)
	require.NoError(t, err)
	require.NoError(t, f.Advance(time.Minute))
	queue, ttft := f.LatencyCounts()
	bounds := QueueTimeBounds()
	want := make([]uint64, len(bounds)+1)
	firsts := uint64(0)
	for _, r := range f.CompletedRequests() {
		if r.OutputTokens > 0 {
			firsts++
		}
		if r.ClientAborted {
			continue
		}
		i := 0
		for i < len(bounds) && r.QueueTime.Seconds() > bounds[i] {
			i++
		}
		want[i]++
	}
	require.Equal(t, want, queue)
	var n uint64
	for _, c := range ttft {
		n += c
	}
	require.GreaterOrEqual(t, n, firsts, "TTFT counts every first token, of running requests too")
	require.Len(t, ttft, len(TTFTBounds())+1)
}

// TestFastForwardRunsTheSameFleet runs lean fleets twice, stepping every
// engine one step at a time and fast-forwarding plain decode stretches:
// every counter, gauge and histogram, every request's state and the
// exposition must be the same at each Advance, for a steady load, a bursty
// one that queues, and a KV cache small enough to preempt.
func TestFastForwardRunsTheSameFleet(t *testing.T) {
	configs := map[string]func(*Config){
		"steady":   func(c *Config) { c.Rate = 6 },
		"queueing": func(c *Config) { c.Rate = 40 },
		"kv-bound": func(c *Config) { c.Rate, c.Engine.NumGPUBlocks = 20, 300 },
	}
	for name, set := range configs {
		t.Run(name, func(t *testing.T) {
			run := func(ff bool) []string {
				defer func(was bool) { fastForwardOn = was }(fastForwardOn)
				fastForwardOn = ff
				cfg := DefaultConfig()
				cfg.Lean, cfg.Seed = true, 7
				cfg.Instances = []InstanceConfig{{Model: "m"}, {Model: "m"}}
				set(&cfg)
				f, err := NewFleet(cfg)
				require.NoError(t, err)
				var states []string
				defer func() {
					n := int64(0)
					for _, e := range f.engines {
						n += e.forwarded
					}
					if ff {
						require.Positive(t, n, "no stretch was fast-forwarded: the comparison would prove nothing")
						t.Logf("%d step ends fast-forwarded", n)
					}
				}()
				for _, d := range []time.Duration{17 * time.Second, time.Minute, 43 * time.Second, 2 * time.Minute} {
					require.NoError(t, f.Advance(d))
					for i := range cfg.Instances {
						var b strings.Builder
						require.NoError(t, f.WriteMetrics(&b, i))
						states = append(states, b.String())
					}
					q, ttft := f.LatencyCounts()
					states = append(states, fmt.Sprint(f.Snapshot().Engines, q, ttft))
				}
				return states
			}
			stepped, forwarded := run(false), run(true)
			require.Equal(t, len(stepped), len(forwarded))
			for i := range stepped {
				require.Equal(t, stepped[i], forwarded[i], "state %d", i)
			}
		})
	}
}
