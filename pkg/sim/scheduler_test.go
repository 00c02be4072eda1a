package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bareEngine is an engine without arrivals; tests inject requests.
func bareEngine(mutate func(*EngineParams)) *engine {
	p := DefaultEngineParams()
	p.PrefixCaching, p.AbortRate = false, 0
	p.StepBase, p.StepPerSeq, p.StepPerPrefillToken = 10*time.Millisecond, 0, 0
	if mutate != nil {
		mutate(&p)
	}
	ic := InstanceConfig{Model: "m", Engines: 1, Generation: V1, Engine: &p}
	return newEngine(ic, engineSetup{profile: Profile{Kind: Steady}, preemptionLog: 1000, requestLog: 1000})
}

// inject queues a request as an arrival at the engine's current time
// would, without starting a step; the test calls startStep when it wants
// several requests in one batch.
func (e *engine) inject(prompt, target int) *request {
	e.nextID++
	r := &request{id: e.nextID, arrival: e.now, waitStart: e.now, prompt: prompt, numTokens: prompt,
		maxTokens: e.limitMaxTokens, target: target}
	e.st.arrivals++
	e.waiting.pushBack(r)
	return r
}

func TestPreemptionEvictsNewestToFront(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.NumGPUBlocks, p.MaxNumSeqs = 10, 8 })
	var reqs []*request
	for range 3 {
		reqs = append(reqs, e.inject(48, 100)) // 3 blocks each, 9 of 10 used
	}
	e.startStep()
	require.Len(t, e.running, 3)
	require.Equal(t, 1, e.freeBlocks)

	// Step 1 ends: every request sampled its first token (49 tokens now).
	// Step 2: the first takes the last free block; the second finds none and
	// evicts the newest, the third.
	e.advanceTo(10 * time.Millisecond)
	require.Equal(t, []*request{reqs[0], reqs[1]}, e.running)
	require.Len(t, e.batch, 2)
	victim := e.waiting.front()
	require.Same(t, reqs[2], victim)
	require.Zero(t, victim.blocks)
	require.Zero(t, victim.computed)
	require.Equal(t, 49, victim.numTokens, "sampled output is kept and recomputed")
	require.Equal(t, 1, victim.preemptions)
	require.Equal(t, int64(1), e.st.truePreemptions)
	ev := e.preemptionLog.appendTo(nil)
	require.Len(t, ev, 1)
	require.Equal(t, PreemptionEvent{SimTime: 10 * time.Millisecond, Model: "m", RequestID: 3, KVUsage: 1, Running: 2, Waiting: 1}, ev[0])
}

func TestPreemptedRequestGoesBeforeNewArrivals(t *testing.T) {
	e := bareEngine(func(p *EngineParams) { p.NumGPUBlocks, p.MaxNumSeqs = 10, 8 })
	for range 3 {
		e.inject(48, 100)
	}
	e.startStep()
	e.advanceTo(5 * time.Millisecond)
	late := e.inject(16, 10)
	e.advanceTo(10 * time.Millisecond)
	require.Equal(t, uint64(3), e.waiting.front().id)
	require.Equal(t, 2, e.waiting.len())
	require.Same(t, late, e.waiting.buf[(e.waiting.head+1)%len(e.waiting.buf)])
}

func TestChunkedPrefillTimings(t *testing.T) {
	e := bareEngine(func(p *EngineParams) {
		p.MaxNumBatchedTokens = 2048
		p.StepPerPrefillToken = time.Microsecond
	})
	e.inject(5000, 3)
	e.startStep()
	// Prefill in chunks of 2048, 2048 and 904 tokens: 3×10 ms + 5000 µs, then
	// two decode steps of 10 ms.
	e.advanceTo(time.Second)
	done := e.completedLog.appendTo(nil)
	require.Len(t, done, 1)
	require.Equal(t, 35*time.Millisecond, done[0].TTFT)
	require.Equal(t, 55*time.Millisecond, done[0].E2E)
	require.Zero(t, done[0].QueueTime)
	require.Equal(t, "stop", done[0].Reason)
	// vLLM counts the prompt in the iteration of the first token; steps
	// that only prefill a chunk produce no output and are not observed.
	require.Equal(t, uint64(3), e.h.iteration.count)
	require.Equal(t, 5000.0+3, e.h.iteration.sum)
	require.Equal(t, e.p.NumGPUBlocks, e.freeBlocks, "finished requests free their blocks")
}

func TestStepTime(t *testing.T) {
	e := bareEngine(func(p *EngineParams) {
		p.StepBase, p.StepPerSeq, p.StepPerPrefillToken = 5*time.Millisecond, time.Millisecond, 10*time.Microsecond
	})
	e.inject(100, 50)
	e.inject(200, 50)
	e.startStep()
	require.Equal(t, 5*time.Millisecond+2*time.Millisecond+300*10*time.Microsecond, e.stepEnd-e.now, "prefill step")
	e.advanceTo(e.stepEnd)
	require.Equal(t, 5*time.Millisecond+2*time.Millisecond, e.stepEnd-e.now, "decode step")
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*EngineParams)
		wantReason string
	}{
		{"natural end", func(p *EngineParams) { p.OutputTokens = Dist{Kind: Fixed, A: 20} }, "stop"},
		{"max_tokens", func(p *EngineParams) { p.OutputTokens = Dist{Kind: Fixed, A: 5000}; p.MaxTokens = 30 }, "length"},
		{"client abort", func(p *EngineParams) { p.AbortRate = 1 }, "abort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) { c.Engine.AbortRate = 0; tt.mutate(&c.Engine) }, InstanceConfig{Model: "m"})
			require.NoError(t, f.Advance(time.Minute))
			done := f.CompletedRequests()
			require.NotEmpty(t, done)
			for _, r := range done {
				require.Equal(t, tt.wantReason, r.Reason)
				require.LessOrEqual(t, r.OutputTokens, f.Config().Instances[0].Engine.MaxTokens)
			}
		})
	}
}

// TestSchedulerInvariants runs an overloaded tiny engine in small steps and
// checks the bookkeeping after each.
func TestSchedulerInvariants(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*EngineParams)
	}{
		{"kv-bound", tinyKV},
		{"seq-bound", func(p *EngineParams) { p.MaxNumSeqs = 3 }},
		{"budget-bound with prefix cache", func(p *EngineParams) {
			p.MaxNumBatchedTokens, p.PrefixCaching, p.PrefixHitRate, p.NumGPUBlocks = 300, true, 0.5, 400
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) { c.Rate = 1.5; tt.mutate(&c.Engine) }, InstanceConfig{Model: "m"})
			e := f.engines[0]
			for i := range 6000 {
				e.advanceTo(time.Duration(i) * 7 * time.Millisecond)
				checkInvariants(t, e, i%10 == 0)
			}
			require.Positive(t, e.st.completed)
		})
	}
}

func checkInvariants(t *testing.T, e *engine, queue bool) {
	t.Helper()
	held := 0
	for _, r := range e.running {
		held += r.blocks
		require.GreaterOrEqual(t, r.blocks, e.blocksFor(r.computed))
		require.False(t, r.done)
	}
	require.Equal(t, e.p.NumGPUBlocks, e.freeBlocks+held, "blocks are conserved")
	require.LessOrEqual(t, len(e.running), e.p.MaxNumSeqs)
	tokens := 0
	for _, s := range e.batch {
		tokens += s.n
	}
	require.LessOrEqual(t, tokens, e.p.MaxNumBatchedTokens)
	if queue {
		checkQueueOrder(t, e)
	}
}

// checkQueueOrder: the queue is the preempted (already scheduled) requests,
// then the new ones in arrival order.
func checkQueueOrder(t *testing.T, e *engine) {
	t.Helper()
	fresh, lastID := false, uint64(0)
	for i := range e.waiting.len() {
		r := e.waiting.buf[(e.waiting.head+i)%len(e.waiting.buf)]
		require.Zero(t, r.blocks)
		if !r.scheduled {
			require.Greater(t, r.id, lastID)
			fresh, lastID = true, r.id
		} else {
			require.False(t, fresh, "a preempted request behind a new one")
		}
	}
}
