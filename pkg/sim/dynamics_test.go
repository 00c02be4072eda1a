package sim

import (
	"bytes"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tinyKV makes an engine whose KV cache holds about one and a half average
// requests, so preemptions come quickly.
func tinyKV(p *EngineParams) {
	p.NumGPUBlocks = 48
	p.MaxNumSeqs = 64
	p.PromptTokens = Dist{Kind: Uniform, A: 50, B: 200}
	p.OutputTokens = Dist{Kind: Uniform, A: 100, B: 300}
}

func TestLittlesLaw(t *testing.T) {
	tests := []struct {
		name        string
		rate        float64
		profile     Profile
		engine      func(*EngineParams)
		preemptions bool
	}{
		// Four sequences at most: capacity is about 1.2 requests/s.
		{"batch-limited steady", 1.05, Profile{Kind: Steady}, func(p *EngineParams) { p.MaxNumSeqs = 4 }, false},
		{"batch-limited bursts", 0.8, Profile{Kind: Bursts, Period: 10 * time.Minute, Length: 2 * time.Minute, Factor: 1.8},
			func(p *EngineParams) { p.MaxNumSeqs = 4 }, false},
		{"kv-limited with preemptions", 0.7, Profile{Kind: Steady}, tinyKV, true},
		{"token-budget-limited chunked prefill", 2.8, Profile{Kind: Sine, Period: 30 * time.Minute, Amplitude: 0.2},
			func(p *EngineParams) {
				p.MaxNumBatchedTokens, p.MaxNumSeqs, p.StepPerPrefillToken = 256, 16, 100*time.Microsecond
			}, false},
	}
	const horizon = 3 * time.Hour
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) {
				c.Rate, c.Profile, c.Skew = tt.rate, tt.profile, 0
				tt.engine(&c.Engine)
			}, InstanceConfig{Model: "m"})
			require.NoError(t, f.Advance(horizon))
			e := f.Snapshot().Engines[0]
			l := e.WaitingIntegral / horizon.Seconds()        // time-average queue length
			lambda := float64(e.Arrivals) / horizon.Seconds() // arrival rate
			w := e.TotalWait.Seconds() / float64(e.Completed) // mean wait per request
			t.Logf("L=%.3f λ=%.3f W=%.3f preemptions=%d", l, lambda, w, e.Preemptions)
			require.Greater(t, e.Completed, int64(5000))
			require.Less(t, e.Waiting, 50, "the queue must be stable for the law to apply")
			require.Greater(t, l, 0.2, "the queue must be non-trivial for the check to mean anything")
			require.Equal(t, tt.preemptions, e.Preemptions > 0)
			require.InEpsilon(t, l, lambda*w, 0.05)
		})
	}
}

func TestBelowCapacity(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Rate = 2 }, InstanceConfig{Model: "m", Engines: 2})
	maxWaiting := 0.0
	for range 60 {
		require.NoError(t, f.Advance(time.Minute))
		s := scrape(t, f, 0)
		for _, sv := range s.families["vllm:num_requests_waiting"].series {
			maxWaiting = math.Max(maxWaiting, sv.value)
		}
	}
	for _, e := range f.Snapshot().Engines {
		elapsed := f.Now().Seconds()
		require.Less(t, e.WaitingIntegral/elapsed, 0.05, "time-average queue")
		require.Less(t, e.TotalWait.Seconds()/float64(e.Completed), 0.05, "mean wait (s)")
		require.Zero(t, e.Preemptions)
		require.Less(t, e.KVBlocksUsed, e.KVBlocksTotal/2)
	}
	require.LessOrEqual(t, maxWaiting, 5.0, "arrivals wait at most for the step in progress")
	require.Empty(t, f.PreemptionEvents())
}

func TestPreemptionsMatchEvents(t *testing.T) {
	tests := []struct {
		name string
		gen  Generation
		dp   int
	}{
		{"v1 data parallel", V1, 2},
		{"v0", V0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) { c.Rate = 1.5; tinyKV(&c.Engine) },
				InstanceConfig{Model: "m", Engines: tt.dp, Generation: tt.gen})
			require.NoError(t, f.Advance(30*time.Minute))
			events := f.PreemptionEvents()
			s := scrape(t, f, 0)
			for _, e := range f.Snapshot().Engines {
				require.Positive(t, e.Preemptions, "an over-committed cache must preempt")
				n, reported := 0, 0
				for _, ev := range events {
					if ev.Engine == e.Engine {
						n++
						require.GreaterOrEqual(t, ev.KVUsage, 0.9, "preemption only when the cache is full")
						if ev.Reported {
							reported++
						}
					}
				}
				require.Equal(t, int64(n), e.Preemptions, "logged events equal the true count")
				match := map[string]string{"engine": strconv.Itoa(e.Engine)}
				if tt.gen == V0 {
					match = nil
					require.Equal(t, n, reported, "V0 counted in the scheduler, at once")
				}
				require.Equal(t, float64(reported), s.value(t, "vllm:num_preemptions_total", match), "counter equals reported events")
				require.Equal(t, int64(reported), e.PreemptionsReported)
			}
		})
	}
}

func TestPreemptionEventsMapToWallTime(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Rate = 1.5; tinyKV(&c.Engine) }, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(10*time.Minute))
	events := f.PreemptionEvents()
	require.NotEmpty(t, events)
	for i, ev := range events {
		require.Equal(t, testEpoch.Add(ev.SimTime), ev.Time)
		require.Equal(t, "m", ev.Model)
		if i > 0 {
			require.GreaterOrEqual(t, ev.SimTime, events[i-1].SimTime)
		}
	}
}

// TestScrapesAreConsistent scrapes a mixed fleet under bursty overload and
// checks what any Prometheus would rely on: counters and histograms never
// go down, waiting_by_reason sums to waiting, gauges tell the true state.
func TestScrapesAreConsistent(t *testing.T) {
	f := newTestFleet(t, func(c *Config) {
		c.Rate = 1
		c.Profile = Profile{Kind: Bursts, Period: 5 * time.Minute, Length: time.Minute, Factor: 3}
		tinyKV(&c.Engine)
	}, InstanceConfig{Model: "a", Engines: 2}, InstanceConfig{Model: "b", Generation: V0})
	prev := map[string]seriesView{}
	for range 40 {
		require.NoError(t, f.Advance(20*time.Second))
		truth := f.Snapshot().Engines
		for inst := range 2 {
			s := scrape(t, f, inst)
			checkMonotone(t, s, prev)
			checkGaugesTellTruth(t, s, truth, inst)
		}
	}
}

func checkMonotone(t *testing.T, s scraped, prev map[string]seriesView) {
	t.Helper()
	for name, fv := range s.families {
		if fv.typ == "GAUGE" {
			continue
		}
		for _, sv := range fv.series {
			k := sv.key(name)
			if old, ok := prev[k]; ok {
				require.GreaterOrEqual(t, sv.value, old.value, "%s decreased", k)
				require.GreaterOrEqual(t, sv.count, old.count, "%s count decreased", k)
				for i := range sv.buckets {
					require.GreaterOrEqual(t, sv.buckets[i], old.buckets[i], "%s bucket decreased", k)
				}
			}
			prev[k] = sv
		}
	}
}

func checkGaugesTellTruth(t *testing.T, s scraped, truth []EngineState, inst int) {
	t.Helper()
	usage := "vllm:kv_cache_usage_perc"
	if _, v0 := s.families["vllm:gpu_cache_usage_perc"]; v0 {
		usage = "vllm:gpu_cache_usage_perc"
	}
	for _, e := range truth {
		if e.Instance != inst {
			continue
		}
		var match map[string]string
		if e.Generation == V1 {
			match = map[string]string{"engine": strconv.Itoa(e.Engine)}
			capacity := s.value(t, "vllm:num_requests_waiting_by_reason", merge(match, "reason", "capacity"))
			deferred := s.value(t, "vllm:num_requests_waiting_by_reason", merge(match, "reason", "deferred"))
			require.Equal(t, s.value(t, "vllm:num_requests_waiting", match), capacity+deferred)
		}
		require.Equal(t, float64(e.Waiting), s.value(t, "vllm:num_requests_waiting", match))
		require.Equal(t, float64(e.Running), s.value(t, "vllm:num_requests_running", match))
		require.Equal(t, float64(e.KVBlocksUsed)/float64(e.KVBlocksTotal), s.value(t, usage, match))
		require.Equal(t, float64(e.PreemptionsReported), s.value(t, "vllm:num_preemptions_total", match))
	}
}

func merge(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

// TestHistogramsTellTruth compares the queue-time histogram with the true
// first waits of the completed requests.
func TestHistogramsTellTruth(t *testing.T) {
	f := newTestFleet(t, func(c *Config) {
		c.Rate, c.Skew, c.RequestLog = 1.1, 0, 10000
		c.Engine.MaxNumSeqs = 4
	}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Hour))
	done := f.CompletedRequests()
	require.Less(t, len(done), f.Config().RequestLog, "the log must hold every request for this check")
	var queue, wait float64
	finished := 0
	for _, r := range done {
		wait += r.Wait.Seconds()
		require.GreaterOrEqual(t, r.Wait, r.QueueTime)
		if !r.ClientAborted { // vLLM observes no queue time for client aborts
			queue += r.QueueTime.Seconds()
			finished++
		}
	}
	s := scrape(t, f, 0)
	q := s.families["vllm:request_queue_time_seconds"].series[0]
	require.Equal(t, uint64(finished), q.count)
	require.InDelta(t, queue, q.sum, 1e-6)
	require.InDelta(t, wait, f.Snapshot().Engines[0].TotalWait.Seconds(), 1e-6)
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64, chunks int) (Snapshot, string) {
		f := newTestFleet(t, func(c *Config) {
			c.Seed = seed
			c.Profile = Profile{Kind: Ramp, From: 0.5, To: 3, Over: 20 * time.Minute}
			tinyKV(&c.Engine)
			c.Rate = 0.5
		}, InstanceConfig{Model: "a", Engines: 2}, InstanceConfig{Model: "b", RateFactor: 2})
		const total = 30 * time.Minute
		for i := range time.Duration(chunks) { // uneven steps that add up exactly
			n := time.Duration(chunks)
			require.NoError(t, f.Advance(total*(i+1)/n-total*i/n))
		}
		var buf bytes.Buffer
		require.NoError(t, f.WriteMetrics(&buf, 0))
		return f.Snapshot(), buf.String()
	}
	tests := []struct {
		name      string
		seed      uint64
		chunks    int
		wantEqual bool
	}{
		{"same seed, one call", 7, 1, true},
		{"same seed, 1800 calls", 7, 1800, true},
		{"same seed, 7 uneven calls", 7, 7, true},
		{"other seed", 8, 1, false},
	}
	refSnap, refText := run(7, 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, text := run(tt.seed, tt.chunks)
			if tt.wantEqual {
				require.Equal(t, refSnap, snap)
				require.Equal(t, refText, text)
			} else {
				require.NotEqual(t, refSnap.Engines, snap.Engines)
			}
		})
	}
}

func TestHotInstanceAndSkew(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Skew = 0 },
		InstanceConfig{Model: "m", RateFactor: 3}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(30*time.Minute))
	s := f.Snapshot().Engines
	require.InEpsilon(t, 3.0, float64(s[0].Arrivals)/float64(s[1].Arrivals), 0.1)
	require.Equal(t, 3*s[1].ArrivalRate, s[0].ArrivalRate)
}
