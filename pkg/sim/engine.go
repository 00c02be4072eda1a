package sim

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"
)

// never is a time no event reaches.
const never = time.Duration(math.MaxInt64)

// engine is one simulated vLLM engine core (one data-parallel rank). All
// fields are guarded by mu; the wall-clock driver, scrapes and Snapshot
// take it in turn.
type engine struct {
	mu sync.Mutex

	instance, rank int
	model          string
	gen            Generation
	p              EngineParams
	rng            *rand.Rand
	rate           float64 // arrivals per second before the profile
	profile        Profile
	peakFactor     float64 // profile.peak(), once: a trace's is a scan of its factors
	limitTokens    int     // longest sequence accepted
	limitMaxTokens int     // max_tokens after clipping to limitTokens
	lean           bool    // Config.Lean: only the queue-time and TTFT histograms
	forwarded      int64   // step ends fastForward ran at once (for its test)

	now         time.Duration
	nextArrival time.Duration // next candidate of the thinned arrival process
	busy        bool
	stepEnd     time.Duration
	batch       []scheduledSeq
	preempted   bool // a preemption happened while scheduling this step
	iterTokens  int  // tokens vLLM counts for iteration_tokens_total this step

	waiting    deque[*request]
	running    []*request
	freeBlocks int
	nextID     uint64
	sleepLevel int           // 0 awake, 1 weights offloaded, 2 discard all
	wedgeAt    time.Duration // when the engine wedges; never when it does not
	wedged     bool          // no step runs again (see EngineParams.WedgeAfter)

	st            counters
	h             hists
	prio          priorityStats // per-class observations (priority.go)
	preemptionLog ring[PreemptionEvent]
	completedLog  ring[CompletedRequest]

	spec specStats    // speculative decoding (spec.go)
	lora loraState    // LoRA adapters (lora.go)
	kv   kvState      // prefill/decode roles and NIXL transfers (disagg.go)
	off  offloadState // KV offloading to CPU and the GPU prefix cache it needs (offload.go)

	siblings []*engine // the ranks of this engine's instance, itself included
}

// counters are the engine's cumulative totals and integrals.
type counters struct {
	arrivals, rejected, completed, aborted int64
	admissionRejected                      [numAdmissionReasons]int64 // refused by a queue limit, by reason
	preemptions, truePreemptions           int64                      // counted by the frontend; happened
	promptTokens, cachedPromptTokens       int64
	generationTokens                       int64
	prefixQueries, prefixHits              int64
	success                                [numReasons]int64
	totalWait                              time.Duration
	busy                                   time.Duration
	waitingArea, runningArea               area
}

// area is an exact integral of a count over time in request·nanoseconds.
// It is 128-bit so that days of deep queues cannot overflow, and integer so
// that the result does not depend on how time was chopped into Advance calls.
type area struct{ hi, lo uint64 }

func (a *area) add(n int, d time.Duration) {
	hi, lo := bits.Mul64(uint64(n), uint64(d))
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, lo, 0)
	a.hi += hi + carry
}

// seconds returns the integral in request·seconds.
func (a area) seconds() float64 {
	return (float64(a.hi)*math.Exp2(64) + float64(a.lo)) / 1e9
}

// hists are the engine's histograms, named after the vLLM metrics they feed.
type hists struct {
	ttft, itl, tpot, e2e, queue, inference, prefill, decode histogram
	iteration, promptTokens, genTokens, maxGen              histogram
	paramsN, paramsMaxTokens, prefillKV                     histogram
	numPreemptions                                          histogram // request_num_preemptions (0.32)
	kvXfer, kvPost, kvBytes, kvDesc                         histogram // NIXL (disagg.go)
}

func newHists(gen Generation, maxModelLen int) hists {
	iter := iterationTokensV1
	if gen == V0 {
		iter = iterationTokensV0
	}
	tok := buckets125(maxModelLen)
	return hists{
		ttft: newHistogram(ttftBuckets), itl: newHistogram(itlBuckets), tpot: newHistogram(itlBuckets),
		e2e: newHistogram(requestLatencyBuckets), queue: newHistogram(requestLatencyBuckets),
		inference: newHistogram(requestLatencyBuckets), prefill: newHistogram(requestLatencyBuckets),
		decode: newHistogram(requestLatencyBuckets), iteration: newHistogram(iter),
		promptTokens: newHistogram(tok), genTokens: newHistogram(tok), maxGen: newHistogram(tok),
		paramsN: newHistogram(paramsNBuckets), paramsMaxTokens: newHistogram(tok), prefillKV: newHistogram(tok),
		numPreemptions: newHistogram(numPreemptionsBuckets),
		kvXfer:         newHistogram(nixlXferBuckets), kvPost: newHistogram(nixlPostBuckets),
		kvBytes: newHistogram(nixlBytesBuckets), kvDesc: newHistogram(nixlDescBuckets),
	}
}

// engineSetup is what newEngine needs beyond the instance config.
type engineSetup struct {
	instance, rank int
	index          int // position in the fleet; separates the PCG streams
	seed           uint64
	rate           float64
	profile        Profile
	preemptionLog  int
	requestLog     int
	lean           bool // Config.Lean
}

func newEngine(ic InstanceConfig, s engineSetup) *engine {
	p := *ic.Engine
	e := &engine{
		instance: s.instance, rank: s.rank, model: ic.Model, gen: ic.Generation, p: p,
		rng:     rand.New(rand.NewPCG(s.seed, uint64(s.index)*0x9E3779B97F4A7C15+1)),
		rate:    s.rate,
		profile: s.profile, peakFactor: s.profile.peak(), limitTokens: p.capacity(),
		freeBlocks:    p.NumGPUBlocks,
		sleepLevel:    p.SleepLevel,
		wedgeAt:       never,
		h:             newHists(ic.Generation, p.MaxModelLen),
		preemptionLog: newRing[PreemptionEvent](s.preemptionLog),
		completedLog:  newRing[CompletedRequest](s.requestLog),
		lean:          s.lean,
	}
	e.limitMaxTokens = min(p.MaxTokens, e.limitTokens/2)
	if p.WedgeAfter > 0 {
		e.wedgeAt = p.WedgeAfter
	}
	if e.specOn() {
		e.spec.perPos = make([]int64, p.SpecTokens)
	}
	e.lora = newLoRAState(e.gen, p)
	if ic.Release == Release032 && e.priorityOn() {
		e.prio.label, e.prio.raw = true, newHistogram(requestPriorityBuckets)
	}
	e.kv = newKVState(ic.Role, e.gen)
	e.off = newOffloadState(p, e.gen)
	e.nextArrival = e.drawGap(0)
	return e
}

// advanceTo runs the engine's events up to and including simulated time
// until. Events are processed in time order with step ends before arrivals
// at the same instant, so the history is the same however time is chopped.
func (e *engine) advanceTo(until time.Duration) {
	for {
		next, kind := e.nextEvent()
		if !e.wedged && e.wedgeAt <= min(next, until) {
			e.elapse(e.wedgeAt)
			e.wedge()
			continue
		}
		if next > until {
			break
		}
		e.elapse(next)
		switch kind {
		case eventStep:
			e.finishStep()
			e.startStep()
			e.fastForward(until)
		case eventTransfer:
			e.completeTransfer()
		default:
			e.arrivalCandidate()
		}
	}
	e.elapse(until)
	e.completeOffload()
}

// eventKind orders the engine's events; at the same instant a step ends
// before a KV transfer completes, and both before an arrival.
type eventKind int

const (
	eventArrival eventKind = iota
	eventTransfer
	eventStep
)

// nextEvent is the engine's next event and its time.
func (e *engine) nextEvent() (time.Duration, eventKind) {
	next, kind := e.nextArrival, eventArrival
	if t := e.kv.nextDone(e.wedged); t < never && t <= next {
		next, kind = t, eventTransfer
	}
	if e.busy && e.stepEnd <= next {
		next, kind = e.stepEnd, eventStep
	}
	return next, kind
}

// wedge stops the engine for good at its clock: the step in flight never
// finishes and no step starts again; requests stay where they are.
func (e *engine) wedge() {
	e.wedged, e.wedgeAt = true, e.now
	e.busy = false
}

// elapse moves the clock to t, integrating queue lengths on the way.
func (e *engine) elapse(t time.Duration) {
	if t <= e.now {
		return
	}
	d := t - e.now
	e.st.waitingArea.add(e.numWaiting(), d)
	e.st.runningArea.add(len(e.running), d)
	if e.busy {
		e.st.busy += d
	}
	e.now = t
}

// arrivalCandidate handles one point of the Poisson process of rate
// peak·rate and keeps it with probability factor(t)/peak (thinning), which
// yields an exact inhomogeneous Poisson process for any profile.
func (e *engine) arrivalCandidate() {
	peak := e.rate * e.peakFactor
	// A sleeping engine gets no traffic; the draw still happens, so
	// sleeping does not shift the random stream of later arrivals.
	if e.rng.Float64()*peak < e.rate*e.profile.factor(e.now) && e.sleepLevel == 0 {
		e.arrive()
	}
	e.nextArrival = e.drawGap(e.now)
	if !e.busy {
		e.startStep()
	}
}

// drawGap returns the next candidate arrival after from.
func (e *engine) drawGap(from time.Duration) time.Duration {
	peak := e.rate * e.peakFactor
	if peak <= 0 {
		return never
	}
	gap := e.rng.ExpFloat64() / peak * 1e9
	if gap >= float64(never-from) {
		return never
	}
	return from + time.Duration(gap)
}

// arrive queues a new request, or drops it when the queue is full, as a
// client that gives up at once would. Like every client abort it reaches
// no vLLM metric.
func (e *engine) arrive() {
	if reason, refused := e.admission(); refused {
		e.st.admissionRejected[reason]++
		return
	}
	if e.p.MaxWaiting > 0 && e.waiting.len() >= e.p.MaxWaiting {
		e.st.rejected++
		return
	}
	e.st.arrivals++
	e.queue(e.newRequest(), false)
}

func (e *engine) newRequest() *request {
	e.nextID++
	r := &request{id: e.nextID, arrival: e.now, waitStart: e.now, maxTokens: e.limitMaxTokens, setMax: true}
	// Only a fraction strictly between 0 and 1 draws, so the default
	// (every request sets max_tokens) keeps the random stream unchanged.
	if s := e.p.MaxTokensSetRate; s < 1 && (s <= 0 || e.rng.Float64() >= s) {
		r.setMax = false
	}
	r.prompt = min(e.p.PromptTokens.sample(e.rng), e.limitTokens-r.maxTokens)
	if !r.setMax {
		// vLLM's default max_tokens: whatever max_model_len leaves.
		r.maxTokens = e.limitTokens - r.prompt
	}
	r.target, r.reason = e.p.OutputTokens.sample(e.rng), reasonStop
	if r.target >= r.maxTokens {
		r.target, r.reason = r.maxTokens, reasonLength
	}
	if e.rng.Float64() < e.p.AbortRate {
		r.target, r.reason, r.clientAbort = 1+e.rng.IntN(r.target), reasonAbort, true
	} else if e.p.EngineAbortRate > 0 && e.rng.Float64() < e.p.EngineAbortRate {
		// Only a positive rate draws, so the default keeps the random stream.
		r.target, r.reason = 1+e.rng.IntN(r.target), reasonAbort
	} else if e.p.ErrorRate > 0 && e.rng.Float64() < e.p.ErrorRate {
		// An internal error after some output: an engine-core finish like
		// any other, so request_success_total{finished_reason="error"} and
		// every finished-request histogram see it (output_processor.py
		// _update_stats_from_finished does not look at the reason).
		r.target, r.reason = 1+e.rng.IntN(r.target), reasonError
	}
	if e.off.on {
		e.drawPrefix(r)
	} else if e.p.PrefixCaching {
		r.cached = e.prefixHit(r.prompt)
	}
	r.numTokens = r.prompt
	e.applyFeatures(r)
	// Only a mix draws, so an engine without one keeps its random stream.
	if len(e.p.PriorityMix) > 0 {
		r.priority = e.p.PriorityMix.draw(e.rng)
	}
	return r
}

// applyFeatures gives r its LoRA adapter and its part in disaggregation.
// Without LoRA or a role it draws nothing, keeping the random stream.
func (e *engine) applyFeatures(r *request) {
	r.adapter = -1
	if e.lora.on {
		r.adapter = e.lora.pick(e.rng.Float64())
	}
	switch e.kv.role {
	case RolePrefill:
		// The routing sidecar sends the prefill instance max_tokens=1.
		r.maxTokens, r.setMax, r.target = 1, true, 1
		if r.reason == reasonStop {
			r.reason = reasonLength
		}
	case RoleDecode:
		// The last prompt token is computed locally; the rest is pulled.
		if r.external = r.prompt - r.cached - 1; r.external > 0 {
			r.remote = true
		} else {
			r.external = 0
		}
	}
}

// prefixHit draws how much of a prompt the prefix cache holds: a fraction
// U^((1-h)/h), whose mean is h, rounded down to whole blocks and leaving at
// least one token to compute, as vLLM always recomputes the last one.
func (e *engine) prefixHit(prompt int) int {
	h := e.p.PrefixHitRate
	if h <= 0 {
		return 0
	}
	f := math.Pow(e.rng.Float64(), (1-h)/h)
	hit := min(int(f*float64(prompt)), prompt-1)
	return hit / e.p.BlockSize * e.p.BlockSize
}

func (e *engine) blocksFor(tokens int) int {
	return (tokens + e.p.BlockSize - 1) / e.p.BlockSize
}

func (e *engine) usedBlocks() int { return e.p.NumGPUBlocks - e.freeBlocks }

func (e *engine) kvUsage() float64 {
	return float64(e.usedBlocks()) / float64(e.p.NumGPUBlocks)
}
