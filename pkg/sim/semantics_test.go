package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests pin the simulator to vLLM's current behaviour
// (reference/vllm/current-semantics.md, main at 6adad0876).

// runUntil advances e one step at a time until done holds, failing after a
// simulated minute.
func runUntil(t *testing.T, e *engine, done func() bool) {
	t.Helper()
	for !done() {
		require.True(t, e.busy, "engine went idle first")
		require.Less(t, e.stepEnd, time.Minute, "never happened")
		e.advanceTo(e.stepEnd)
	}
}

// fullISLEngine has a running request holding 7 of 10 blocks, so a 64-token
// prompt (4 blocks) does not fit while its first 32-token chunk (2 blocks)
// would.
func fullISLEngine(t *testing.T, mutate func(*EngineParams)) (*engine, *request) {
	e := bareEngine(func(p *EngineParams) {
		p.NumGPUBlocks, p.MaxNumBatchedTokens = 10, 33
		if mutate != nil {
			mutate(p)
		}
	})
	a := e.inject(100, 100)
	e.startStep()
	runUntil(t, e, func() bool { return a.outputs >= 1 })
	require.Equal(t, 3, e.freeBlocks)
	b := e.inject(64, 10)
	e.advanceTo(e.stepEnd)
	return e, b
}

func TestAdmissionReservesFullPrompt(t *testing.T) {
	e, b := fullISLEngine(t, nil)
	require.False(t, b.scheduled, "vLLM admits a request only when its whole prompt fits (scheduler_reserve_full_isl)")
	require.Equal(t, 1, e.waiting.len())
	require.Len(t, e.running, 1)
}

func TestPreemptionCountedAtVictimsNextOutput(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.NumGPUBlocks, p.MaxNumSeqs = 10, 8 })
	reqs := []*request{e.inject(48, 5), e.inject(48, 5), e.inject(48, 5)}
	e.startStep()
	e.advanceTo(10 * time.Millisecond) // reqs[2] is preempted here (see TestPreemptionEvictsNewestToFront)
	victim := reqs[2]
	require.Equal(t, 1, victim.preemptions)
	require.Equal(t, 1, victim.outputs)
	require.Zero(t, e.st.preemptions, "the counter waits for the victim's next output")
	runUntil(t, e, func() bool { return victim.outputs == 2 })
	require.Equal(t, int64(1), e.st.preemptions, "counted with the victim's next output")
}

func TestPreemptedVictimAbortedBeforeOutputIsNeverCounted(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.NumGPUBlocks, p.MaxNumSeqs = 10, 8 })
	reqs := []*request{e.inject(48, 5), e.inject(48, 5), e.inject(48, 5)}
	reqs[2].target, reqs[2].reason, reqs[2].clientAbort = 50, reasonAbort, true // its client leaves when the stream stalls
	e.startStep()
	e.advanceTo(time.Minute)
	require.Equal(t, 1, reqs[2].preemptions)
	require.Zero(t, e.st.preemptions, "a victim aborted before its next output is never counted")
	require.Zero(t, e.waiting.len())
	require.Equal(t, e.p.NumGPUBlocks, e.freeBlocks)
}

func TestClientAbortsReachNoFinishedMetric(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Engine.AbortRate = 1 }, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	s := scrape(t, f, 0)
	require.Zero(t, s.value(t, "vllm:request_success_total", map[string]string{"finished_reason": "abort"}))
	for _, fam := range []string{"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
		"vllm:request_time_per_output_token_seconds", "vllm:request_prompt_tokens", "vllm:request_generation_tokens",
		"vllm:request_max_num_generation_tokens", "vllm:request_params_n", "vllm:request_params_max_tokens",
		"vllm:request_prefill_kv_computed_tokens"} {
		require.Zero(t, s.families[fam].series[0].count, "%s observes finished requests only", fam)
	}
	// TTFT and inter-token latency are observed per output, before the
	// client leaves (vLLM's IterationStats.update_from_output).
	require.Positive(t, s.families["vllm:time_to_first_token_seconds"].series[0].count)
	require.Positive(t, s.value(t, "vllm:generation_tokens_total", nil))
}

func TestQueueFullClientsAreNotCountedAsAborts(t *testing.T) {
	f := newTestFleet(t, func(c *Config) {
		c.Rate, c.Engine.MaxWaiting, c.Engine.AbortRate = 50, 5, 0
		tinyKV(&c.Engine)
	}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	require.Positive(t, f.Snapshot().Engines[0].Rejected)
	require.Zero(t, scrape(t, f, 0).value(t, "vllm:request_success_total", map[string]string{"finished_reason": "abort"}))
}

func TestIterationTokensExcludePrefixHits(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.PrefixCaching = true })
	r := e.inject(500, 3)
	r.cached = 320
	e.startStep()
	e.advanceTo(time.Second)
	require.Equal(t, uint64(3), e.h.iteration.count)
	require.Equal(t, 500.0-320+3, e.h.iteration.sum, "computed prompt tokens plus generated tokens")
}

func TestMaxNumGenerationTokensIsTokensGenerated(t *testing.T) {
	e := bareEngine(nil)
	e.inject(100, 7)
	e.startStep()
	e.advanceTo(time.Second)
	require.Equal(t, uint64(1), e.h.maxGen.count)
	require.Equal(t, 7.0, e.h.maxGen.sum)
}

func TestPrefixCountersIgnoreReadmission(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.NumGPUBlocks, p.MaxNumSeqs, p.PrefixCaching = 10, 8, true })
	reqs := []*request{e.inject(48, 5), e.inject(48, 5), e.inject(48, 5)}
	for _, r := range reqs {
		r.cached = 16
	}
	e.startStep()
	e.advanceTo(time.Minute)
	require.Equal(t, 1, reqs[2].preemptions)
	require.Equal(t, int64(3*48), e.st.prefixQueries, "a preempted request's re-admission is not exported")
	require.Equal(t, int64(3*16), e.st.prefixHits)
}

func TestCacheConfigInfoLabels(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Engine.NumGPUBlocks, c.Engine.MaxModelLen = 1000, 4000 },
		InstanceConfig{Model: "m"})
	s := scrape(t, f, 0)
	series := s.families["vllm:cache_config_info"].series
	require.Len(t, series, 1)
	l := series[0].labels
	require.Equal(t, "16", l["prefix_match_unit"])
	require.Equal(t, "16000", l["kv_cache_size_tokens"])
	require.Equal(t, "4.0", l["kv_cache_max_concurrency"])
	require.Equal(t, "0", l["engine"])
	for _, gone := range []string{"model_name", "calculate_kv_scales", "hash_block_size"} {
		require.NotContains(t, l, gone)
	}
}

func TestSleepEndpoints(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engines: 2})
	h := f.Handler(0)
	do := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	require.NoError(t, f.Advance(time.Minute))
	require.Equal(t, http.StatusOK, do(http.MethodPost, "/sleep?level=2").Code)
	require.Contains(t, do(http.MethodGet, "/is_sleeping").Body.String(), `"is_sleeping":true`)
	asleep := scrape(t, f, 0)
	for _, eng := range []string{"0", "1"} {
		require.Zero(t, asleep.value(t, "vllm:engine_sleep_state", map[string]string{"engine": eng, "sleep_state": "awake"}))
		require.Equal(t, 1.0, asleep.value(t, "vllm:engine_sleep_state", map[string]string{"engine": eng, "sleep_state": "discard_all"}))
		require.Zero(t, asleep.value(t, "vllm:engine_sleep_state", map[string]string{"engine": eng, "sleep_state": "weights_offloaded"}))
	}
	// The step in flight when the engine fell asleep still completes.
	require.NoError(t, f.Advance(time.Second))
	settled := scrape(t, f, 0)
	eng0 := map[string]string{"engine": "0"}
	require.NoError(t, f.Advance(time.Minute))
	still := scrape(t, f, 0)
	for _, fam := range []string{"vllm:generation_tokens_total", "vllm:num_requests_running", "vllm:num_requests_waiting"} {
		require.Equal(t, settled.value(t, fam, eng0), still.value(t, fam, eng0), "asleep: %s does not move", fam)
	}
	tokens := still.value(t, "vllm:generation_tokens_total", eng0)

	require.Equal(t, http.StatusOK, do(http.MethodPost, "/wake_up").Code)
	require.Contains(t, do(http.MethodGet, "/is_sleeping").Body.String(), `"is_sleeping":false`)
	require.NoError(t, f.Advance(time.Minute))
	awake := scrape(t, f, 0)
	require.Equal(t, 1.0, awake.value(t, "vllm:engine_sleep_state", map[string]string{"engine": "0", "sleep_state": "awake"}))
	require.Greater(t, awake.value(t, "vllm:generation_tokens_total", map[string]string{"engine": "0"}), tokens)
	require.Equal(t, http.StatusBadRequest, do(http.MethodPost, "/sleep?level=3").Code)
	require.False(t, strings.Contains(awake.text, `sleep_state="awake"} 0.0`))
}

func TestAdmissionFirstChunkOnlyWhenNotReserving(t *testing.T) {
	e, b := fullISLEngine(t, func(p *EngineParams) { p.ReserveFullISL = false })
	require.True(t, b.scheduled, "without scheduler_reserve_full_isl the first chunk is enough")
	require.Len(t, e.running, 2)
}

func TestPreemptionLogKeepsTrueAndReportedInstants(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Rate = 1.5; c.Engine.AbortRate = 0.2; tinyKV(&c.Engine) },
		InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(30*time.Minute))
	events := f.PreemptionEvents()
	st := f.Snapshot().Engines[0]
	reported, lost := 0, 0
	var lateness time.Duration
	for _, ev := range events {
		if !ev.Reported {
			lost++
			continue
		}
		reported++
		require.Greater(t, ev.ReportedSimTime, ev.SimTime, "counted after it happened")
		require.Equal(t, f.WallTime(ev.ReportedSimTime), ev.ReportedTime)
		lateness += ev.ReportedSimTime - ev.SimTime
	}
	t.Logf("%d preemptions: %d counted, mean lateness %v; %d never counted", len(events), reported, lateness/time.Duration(max(reported, 1)), lost)
	require.Equal(t, int64(len(events)), st.Preemptions, "the log has every true preemption")
	require.Equal(t, int64(reported), st.PreemptionsReported)
	require.Equal(t, float64(reported), scrape(t, f, 0).value(t, "vllm:num_preemptions_total", nil))
	require.Positive(t, lost, "victims aborted before their next output are never counted")
	require.Positive(t, reported)
}

func TestMaxTokensObservedOnlyWhenSet(t *testing.T) {
	tests := []struct {
		name string
		rate float64
	}{{"none set", 0}, {"half set", 0.5}, {"all set", 1}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) { c.Engine.MaxTokensSetRate, c.Engine.AbortRate = tt.rate, 0 },
				InstanceConfig{Model: "m"})
			require.NoError(t, f.Advance(2*time.Minute))
			s := scrape(t, f, 0)
			finished := s.families["vllm:e2e_request_latency_seconds"].series[0].count
			observed := s.families["vllm:request_params_max_tokens"].series[0].count
			require.Positive(t, finished)
			require.InDelta(t, tt.rate, float64(observed)/float64(finished), 0.1)
		})
	}
}

func TestSleepLevelFromConfig(t *testing.T) {
	asleep := DefaultEngineParams()
	asleep.SleepLevel = 1
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engine: &asleep}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	s := scrape(t, f, 0)
	require.Equal(t, 1.0, s.value(t, "vllm:engine_sleep_state", map[string]string{"sleep_state": "weights_offloaded"}))
	require.Zero(t, s.value(t, "vllm:engine_sleep_state", map[string]string{"sleep_state": "awake"}))
	require.Zero(t, s.value(t, "vllm:generation_tokens_total", nil), "a sleeping engine serves nothing")
	require.Positive(t, scrape(t, f, 1).value(t, "vllm:generation_tokens_total", nil))
	require.Equal(t, 1, f.Snapshot().Engines[0].SleepLevel)

	require.NoError(t, f.SetSleep(0, 0))
	require.NoError(t, f.Advance(time.Minute))
	require.Positive(t, scrape(t, f, 0).value(t, "vllm:generation_tokens_total", nil), "serves again once awake")
	require.ErrorIs(t, f.SetSleep(2, 1), ErrNoInstance)
	require.ErrorIs(t, f.SetSleep(0, 3), ErrInvalidConfig)
}

func TestEngineParamsVLLMKeys(t *testing.T) {
	c, err := ParseConfig([]byte(`{"engine": {"reserve_full_isl": false, "max_tokens_set_rate": 0.5, "sleep_level": 2, "engine_abort_rate": 0.01}}`),
		DefaultConfig())
	require.NoError(t, err)
	require.False(t, c.Engine.ReserveFullISL)
	require.Equal(t, 0.5, c.Engine.MaxTokensSetRate)
	require.Equal(t, 2, c.Engine.SleepLevel)
	require.Equal(t, 0.01, c.Engine.EngineAbortRate)
	for name, mutate := range map[string]func(*EngineParams){
		"sleep level 3":            func(p *EngineParams) { p.SleepLevel = 3 },
		"negative sleep level":     func(p *EngineParams) { p.SleepLevel = -1 },
		"max_tokens_set_rate > 1":  func(p *EngineParams) { p.MaxTokensSetRate = 1.5 },
		"max_tokens_set_rate < 0 ": func(p *EngineParams) { p.MaxTokensSetRate = -0.1 },
		"engine_abort_rate > 1":    func(p *EngineParams) { p.EngineAbortRate = 2 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Instances = []InstanceConfig{{Model: "m"}}
			mutate(&cfg.Engine)
			_, err := NewFleet(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestEngineAbortsAreFinishedRequests(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Engine.AbortRate, c.Engine.EngineAbortRate = 0, 1 },
		InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	s := scrape(t, f, 0)
	aborts := s.value(t, "vllm:request_success_total", map[string]string{"finished_reason": "abort"})
	require.Positive(t, aborts, "aborts the engine reports count as finished_reason=abort")
	require.Equal(t, uint64(aborts), s.families["vllm:e2e_request_latency_seconds"].series[0].count)
	for _, c := range f.CompletedRequests() {
		require.Equal(t, "abort", c.Reason)
		require.False(t, c.ClientAborted)
	}
}
