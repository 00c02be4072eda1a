package sim

import "time"

// startStep picks the next batch the way vLLM V1's scheduler does: first the
// running requests in order (decode or the next prefill chunk), each taking
// KV blocks and preempting the newest running request when none are free;
// then, only if nothing was preempted, waiting requests from the front of
// the queue while the token budget, max-num-seqs and free blocks allow. A
// sleeping or wedged engine schedules nothing.
func (e *engine) startStep() {
	e.batch = e.batch[:0]
	e.preempted = false
	if e.sleepLevel != 0 || e.wedged {
		e.busy = false
		return
	}
	budget := e.scheduleRunning(e.p.MaxNumBatchedTokens)
	if !e.preempted {
		e.scheduleWaiting(budget)
	}
	if len(e.batch) == 0 && e.waiting.len() > 0 && len(e.running) == 0 {
		// Everything was preempted; the queue head now has the whole cache.
		e.scheduleWaiting(e.p.MaxNumBatchedTokens)
	}
	e.busy = len(e.batch) > 0
	if e.busy {
		e.stepEnd = e.now + e.stepTime()
	}
}

func (e *engine) scheduleRunning(budget int) int {
	for i := 0; i < len(e.running) && budget > 0; i++ {
		r := e.running[i]
		n := min(r.numTokens-r.computed, budget)
		s := newScheduledSeq(r, n)
		s.spec = e.specDraft(s, budget-n)
		if !e.grow(r, n+s.spec) {
			break // r was the newest and preempted itself; nothing after it
		}
		e.batch = append(e.batch, s)
		budget -= n + s.spec
	}
	return budget
}

// grow gives r the blocks for n more tokens. While blocks are short it
// preempts the newest running request, which may be r itself; it reports
// whether r is still running. Victims come from the end of the running list,
// past r, so none of them is already in this step's batch.
func (e *engine) grow(r *request, n int) bool {
	// Most steps add a decode token to a block r already holds: that test
	// is a multiplication, where blocksFor divides (a what-if twin spends
	// much of its time here).
	if r.computed+n <= r.blocks*e.p.BlockSize {
		return true
	}
	// Speculation can leave blocks ahead of the KV it kept; they are reused.
	need := max(0, e.blocksFor(r.computed+n)-r.blocks)
	for need > e.freeBlocks {
		victim := e.running[len(e.running)-1]
		e.preempt(victim)
		if victim == r {
			return false
		}
	}
	e.freeBlocks -= need
	r.blocks += need
	e.trimGPUCache()
	return true
}

// scheduleWaiting admits requests from the front of the queue. It stops at
// the first one that does not fit (FCFS: no overtaking), as vLLM does. With
// ReserveFullISL the whole sequence must fit in the free blocks, though only
// the first chunk's blocks are allocated now.
//
// Decode instances first run requests whose KV has arrived, and start a KV
// transfer instead of admitting a request that must pull its prompt. With
// LoRA a request whose adapter would exceed max_loras is skipped and the
// next one considered, as vLLM does; skipped requests keep their place.
func (e *engine) scheduleWaiting(budget int) {
	budget = e.scheduleReady(budget)
	e.lora.deferred = 0
	for i := 0; i < e.waiting.len() && budget > 0 && len(e.running) < e.p.MaxNumSeqs; {
		r := e.waiting.at(i)
		if !e.lora.admissible(r) {
			e.lora.deferred++
			i++
			continue
		}
		if r.remote {
			if !e.startTransfer(i) {
				return
			}
			continue
		}
		e.offloadLookup(r)
		n := min(r.numTokens-r.cached, budget)
		need := e.blocksFor(r.cached + n)
		if need > e.freeBlocks || (e.p.ReserveFullISL && e.blocksFor(r.numTokens) > e.freeBlocks) {
			return
		}
		e.waiting.removeAt(i)
		e.admit(r, need)
		e.batch = append(e.batch, newScheduledSeq(r, n))
		budget -= n
	}
}

// admit moves r from waiting to running with blocks for its cached prefix
// and its first chunk.
func (e *engine) admit(r *request, blocks int) {
	e.freeBlocks -= blocks
	r.blocks = blocks
	r.computed = r.cached
	e.offloadAdmit(r)
	e.countPrefix(r)
	e.enterRunning(r)
}

// countPrefix counts r's prefix-cache lookup once. A preempted request's
// re-admission goes to counters vLLM does not export.
func (e *engine) countPrefix(r *request) {
	if r.prefixCounted {
		return
	}
	r.prefixCounted = true
	if e.p.PrefixCaching {
		e.st.prefixQueries += int64(r.numTokens)
		e.st.prefixHits += int64(r.cached - r.host)
	}
	if e.off.on {
		// The connector's lookup: what the GPU did not have, and what the
		// CPU tier gave (scheduler.py connector_prefix_cache_stats).
		e.kv.extQueries += int64(r.numTokens - (r.cached - r.host))
		e.kv.extHits += int64(r.host)
	}
}

// enterRunning appends r to the running batch; its first scheduling ends
// the queue time vLLM reports.
func (e *engine) enterRunning(r *request) {
	wait := e.now - r.waitStart
	r.totalWait += wait
	if !r.scheduled {
		r.scheduled, r.firstScheduled, r.queueTime = true, e.now, wait
	}
	i := e.runningAt(r)
	e.running = append(e.running, nil)
	copy(e.running[i+1:], e.running[i:])
	e.running[i] = r
	e.lora.enterRunning(r)
}

// preempt evicts v, the newest running request, by recompute: its blocks are
// freed, its KV progress is lost, and it goes back to the front of the queue.
// The log records the true instant. V1's frontend counts the preemption only
// with v's next output; a client that will abort leaves as soon as its
// stream stalls, so such a preemption is never counted. V0 counted in the
// scheduler, at once.
func (e *engine) preempt(v *request) {
	usage := e.kvUsage()
	e.running = e.running[:len(e.running)-1]
	e.lora.leaveRunning(v)
	e.freeBlocks += v.blocks
	e.offloadFree(v)
	v.blocks, v.computed = 0, 0
	v.preemptions++
	v.waitStart = e.now
	e.preempted = true
	e.st.truePreemptions++
	waiting := e.waiting.len()
	if !v.clientAbort {
		waiting++
	}
	seq := e.preemptionLog.push(PreemptionEvent{
		SimTime: e.now, Instance: e.instance, Engine: e.rank, Model: e.model, RequestID: v.id,
		KVUsage: usage, Running: len(e.running), Waiting: waiting,
	})
	switch {
	case e.gen == V0:
		e.st.preemptions++
		e.markReported(seq)
	case v.clientAbort:
		e.clientAbort(v)
		return
	default:
		v.unreported = append(v.unreported, seq)
	}
	e.queue(v, true)
}

// reportPreemptions counts r's preemptions not yet counted, as vLLM's
// frontend does when r's next output arrives.
func (e *engine) reportPreemptions(r *request) {
	for _, seq := range r.unreported {
		e.st.preemptions++
		e.markReported(seq)
	}
	r.unreported = r.unreported[:0]
}

// markReported notes in the log when the counter counted event seq, if the
// event is still kept.
func (e *engine) markReported(seq uint64) {
	if ev := e.preemptionLog.at(seq); ev != nil {
		ev.Reported, ev.ReportedSimTime = true, e.now
	}
}

// stepTime is a + b·(sequences in batch) + c·(prefill tokens in step).
func (e *engine) stepTime() time.Duration {
	prefill := 0
	for _, s := range e.batch {
		if s.prefill {
			prefill += s.n
		}
		prefill += s.spec // verifying drafts costs like prefill tokens
	}
	return e.p.StepBase + time.Duration(len(e.batch))*e.p.StepPerSeq +
		time.Duration(prefill)*e.p.StepPerPrefillToken
}

// finishStep applies the step that just ended: KV progress, sampled tokens,
// finished requests.
func (e *engine) finishStep() {
	e.iterTokens = 0
	for _, s := range e.batch {
		if s.spec > 0 {
			e.finishSpecSeq(s)
			continue
		}
		s.r.computed += s.n
		if s.r.computed == s.r.numTokens {
			e.emitTokens(s.r, 1)
		}
	}
	e.offloadAfterStep()
	if e.iterTokens > 0 && !e.lean {
		e.h.iteration.observe(float64(e.iterTokens))
	}
	e.removeFinished()
	e.lora.record(e.now)
	e.busy = false
}

// emitTokens gives r up to m new output tokens in one output (m > 1 with
// speculative decoding; tokens past the request's end are dropped) and
// observes what vLLM observes per output: TTFT for the first, one
// inter-token latency for each later output.
func (e *engine) emitTokens(r *request, m int) {
	m = min(m, r.target-r.outputs)
	first := r.outputs == 0
	r.outputs += m
	r.numTokens += m
	e.st.generationTokens += int64(m)
	e.iterTokens += m
	e.reportPreemptions(r)
	if first {
		e.lora.firstOutput(r)
		r.firstToken = e.now
		e.h.ttft.observe(seconds(e.now - r.arrival))
		if c := e.classHists(r); c != nil {
			c.ttft.observe(seconds(e.now - r.arrival))
		}
		// vLLM counts the prompt once, in the iteration of the first token;
		// iteration_tokens_total takes only the computed part, without
		// prefix-cache hits.
		e.st.promptTokens += int64(r.prompt)
		e.st.cachedPromptTokens += int64(r.cached + r.external)
		e.kv.extPromptTokens += int64(r.external + r.host)
		e.countCachedBySource(r)
		e.iterTokens += r.prompt - r.cached - r.external
	} else if !e.lean {
		e.h.itl.observe(seconds(e.now - r.lastToken))
	}
	r.lastToken = e.now
	if r.outputs < r.target {
		return
	}
	if r.clientAbort {
		e.clientAbort(r)
		return
	}
	e.finish(r)
}

// finish releases r and observes the per-request histograms vLLM observes
// when a request finishes, aborts the engine core reports included.
func (e *engine) finish(r *request) {
	e.release(r)
	e.expireOnFinish()
	e.st.success[r.reason]++
	e.observeFinished(&e.h, r)
	if c := e.classHists(r); c != nil {
		e.prio.success[priorityClass(r.priority)][r.reason]++
		e.prio.raw.observe(float64(r.priority))
		e.observeFinished(c, r)
	}
	e.logCompleted(r)
}

// clientAbort ends r because its client disconnected, wherever r is (a
// running request, or a preemption victim not yet queued). vLLM's frontend
// drops such a request without finished-request stats: no request_success,
// no e2e, queue, inference or token-count observation; what was observed per
// output (TTFT, inter-token latency, token counters) stays. The request log
// keeps it, marked ClientAborted.
func (e *engine) clientAbort(r *request) {
	e.release(r)
	e.st.aborted++
	r.unreported = nil
	e.logCompleted(r)
}

// release frees r's blocks and counts it as completed in the truth.
func (e *engine) release(r *request) {
	r.done = true
	e.lora.finished(r)
	e.freeBlocks += r.blocks
	e.offloadFree(r)
	r.blocks = 0
	e.st.completed++
	e.st.totalWait += r.totalWait
}

func (e *engine) logCompleted(r *request) {
	c := CompletedRequest{
		Instance: e.instance, Engine: e.rank, Model: e.model, ID: r.id,
		Arrival: r.arrival, Finished: e.now, Wait: r.totalWait, QueueTime: r.queueTime,
		E2E: e.now - r.arrival, PromptTokens: r.prompt, OutputTokens: r.outputs, Preemptions: r.preemptions,
		Reason: reasonNames[r.reason], ClientAborted: r.clientAbort, Priority: r.priority,
	}
	if e.lora.on && r.adapter >= 0 {
		c.Adapter = e.lora.names[r.adapter]
	}
	if r.outputs > 0 {
		c.TTFT = r.firstToken - r.arrival
	}
	e.completedLog.push(c)
}

// observeFinished observes r's finished-request histograms into h: the
// engine's own, or those of r's priority class.
func (e *engine) observeFinished(h *hists, r *request) {
	decode := r.lastToken - r.firstToken
	h.queue.observe(seconds(r.queueTime))
	if e.lean {
		return
	}
	h.e2e.observe(seconds(e.now - r.arrival))
	h.prefill.observe(seconds(r.firstToken - r.firstScheduled))
	h.decode.observe(seconds(decode))
	h.inference.observe(seconds(r.lastToken - r.firstScheduled))
	tpot := 0.0
	if r.outputs > 1 {
		tpot = seconds(decode) / float64(r.outputs-1)
	}
	h.tpot.observe(tpot)
	h.promptTokens.observe(float64(r.prompt))
	h.genTokens.observe(float64(r.outputs))
	h.maxGen.observe(float64(r.outputs)) // the most tokens any of the n=1 samples generated
	h.paramsN.observe(1)
	if r.setMax {
		h.paramsMaxTokens.observe(float64(r.maxTokens))
	}
	h.prefillKV.observe(float64(r.prompt - r.cached - r.external))
	h.numPreemptions.observe(float64(r.preemptions))
}

// removeFinished drops finished requests from the running list, keeping the
// order, which is the preemption priority.
func (e *engine) removeFinished() {
	kept := e.running[:0]
	for _, r := range e.running {
		if !r.done {
			kept = append(kept, r)
		} else {
			e.lora.leaveRunning(r)
		}
	}
	clear(e.running[len(kept):])
	e.running = kept
}

func seconds(d time.Duration) float64 { return d.Seconds() }
