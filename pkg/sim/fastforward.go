package sim

import "time"

// A what-if twin (Config.Lean) spends most of its time stepping engines
// whose batch only decodes: every running request one token further, the
// same batch again, the same step time. fastForward runs such a stretch at
// once, exactly as the steps one by one would: it stops before anything
// that would make a step differ (an arrival, a request's last token, a KV
// block the cache cannot give without preempting, a KV transfer, a wedge,
// the end of the Advance), so the history is the same however it is run
// (TestFastForwardRunsTheSameFleet compares it with stepping).

// fastForwardOn lets the test run the same fleet stepping one by one.
var fastForwardOn = true

// fastForward runs the step ends that only repeat the batch in flight,
// up to until. It is called right after a step started.
func (e *engine) fastForward(until time.Duration) {
	if !fastForwardOn || !e.lean || !e.plainDecode() {
		return
	}
	dt := e.stepEnd - e.now
	k := e.repeatable(until, dt)
	if k <= 0 {
		return
	}
	t := e.now + time.Duration(k)*dt
	e.elapse(t)
	for _, s := range e.batch {
		r := s.r
		r.computed += k
		r.outputs += k
		r.numTokens += k
		r.lastToken = t
		if need := e.blocksFor(r.computed+1) - r.blocks; need > 0 {
			e.freeBlocks -= need
			r.blocks += need
		}
	}
	e.st.generationTokens += int64(k * len(e.batch))
	e.stepEnd = t + dt
	e.forwarded += int64(k)
}

// plainDecode: the batch in flight is every running request decoding one
// token, nothing waits or moves KV, and no feature acts per step.
func (e *engine) plainDecode() bool {
	if !e.busy || e.wedged || e.sleepLevel != 0 || e.lora.on || e.specOn() || e.off.on || e.numWaiting() > 0 ||
		len(e.batch) != len(e.running) {
		return false
	}
	for _, s := range e.batch {
		if s.prefill || s.spec != 0 || s.n != 1 || len(s.r.unreported) > 0 {
			return false
		}
	}
	return true
}

// repeatable is how many step ends, each dt after the last, run only the
// batch again: none past until, an arrival or a KV transfer (which come
// after a step end at the same instant), none at or past the wedge (which
// comes first), none that gives a request its last token, and only as many
// as the free KV blocks let every request grow without a preemption.
func (e *engine) repeatable(until, dt time.Duration) int {
	limit := min(until, e.nextArrival, e.kv.nextDone(e.wedged))
	if e.wedgeAt < never {
		limit = min(limit, e.wedgeAt-1)
	}
	if limit < e.now || dt <= 0 {
		return 0
	}
	k := int((limit - e.now) / dt)
	for _, s := range e.batch {
		k = min(k, s.r.target-s.r.outputs-1)
	}
	for k > 0 && e.blocksNeeded(k) > e.freeBlocks {
		k = e.fitBlocks(k)
	}
	return k
}

// blocksNeeded is the KV blocks the batch takes to decode k tokens more
// and schedule the next one.
func (e *engine) blocksNeeded(k int) int {
	n := 0
	for _, s := range e.batch {
		n += max(0, e.blocksFor(s.r.computed+k+1)-s.r.blocks)
	}
	return n
}

// fitBlocks is the largest j < k whose blocks fit (0 when none does).
func (e *engine) fitBlocks(k int) int {
	lo, hi := 0, k-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if e.blocksNeeded(mid) <= e.freeBlocks {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
