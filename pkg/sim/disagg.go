package sim

import (
	"fmt"
	"time"
)

// Prefill/decode disaggregation over NIXL, as vLLM's NixlConnector does it.
//
// A decode instance (kv_consumer) pulls each request's prompt KV from a
// prefill instance before running it. The scheduler allocates the blocks
// for the whole prompt and parks the request (WAITING_FOR_REMOTE_KVS, a
// deferred waiting request) while the transfer runs; when the KV has
// arrived the request is scheduled, computes the last prompt token itself
// and samples its first token, so queue time and TTFT include the
// transfer. The connector's prefix-cache stats count the pulled tokens
// (scheduler.py: connector_prefix_cache_queries = prompt − local hit,
// hits = tokens pulled), and prompt_tokens_by_source books them as
// external_kv_transfer.
//
// A failed transfer is counted in nixl_num_failed_transfers (nixl/stats.py
// record_failed_transfer; no histogram observation). What happens to the
// request follows kv_load_failure_policy (vllm/config/kv_transfer.py),
// whose default "fail" finishes it at once with finished_reason="error";
// "recompute" prefills it locally. A failed request never reached the
// running batch, so vLLM's stats give it no timing (stats.py
// RequestTiming None): request_success, e2e latency and the token-count
// histograms are observed, queue, prefill, decode, inference time and
// TPOT are not, and prefill_kv_computed observes the whole prompt (its
// num_cached_tokens was never set). The simulator does not add such a
// request's prompt to prompt_tokens_total.
//
// Simplifications: a prefill instance serves every request with
// max_tokens=1 (what the routing sidecar sends it) and releases its KV at
// once; the chance that nobody pulls it before the lease ends is
// KVExpireRate, counted when the request finishes (nixl_num_kv_expired_reqs,
// tracked on the P instance). Instances are not paired: a decode instance
// does not wait for any prefill instance's work. A transfer takes
// KVTransferBase + KVTransferPerToken·tokens, its post time is a twentieth
// of that, and it uses one descriptor per block and layer of a 32-layer
// model. Every instance with a role exports all seven NIXL families, as
// the connector registers them on both sides.

// nixlDescriptorsPerBlock is NIXL descriptors per KV block: one per layer
// of Llama-3.1-8B.
const nixlDescriptorsPerBlock = 32

// kvState is an engine's NIXL bookkeeping.
type kvState struct {
	role   string
	xfers  []transfer      // in flight, by completion time
	ready  deque[*request] // KV arrived (or recompute decided), waiting to run
	forced int             // transfers that will fail on command

	transfers, failures, notifFailures, expired, bytes int64
	extQueries, extHits, extPromptTokens               int64
}

// transfer is one KV pull in flight.
type transfer struct {
	r    *request
	done time.Duration
	dur  time.Duration
	fail bool // drawn at the start from KVTransferFailRate
}

func newKVState(role string, gen Generation) kvState {
	if gen != V1 {
		role = ""
	}
	return kvState{role: role}
}

// nextDone is when the next transfer completes; never while wedged (the
// hung worker drives transfers too).
func (k *kvState) nextDone(wedged bool) time.Duration {
	if wedged || len(k.xfers) == 0 {
		return never
	}
	return k.xfers[0].done
}

// eachWaiting calls f for every request that waits: the queue, transfers
// in flight and requests ready to run.
func (e *engine) eachWaiting(f func(*request)) {
	for i := range e.waiting.len() {
		f(e.waiting.at(i))
	}
	for _, x := range e.kv.xfers {
		f(x.r)
	}
	for i := range e.kv.ready.len() {
		f(e.kv.ready.at(i))
	}
}

// numWaiting is vllm:num_requests_waiting: queued plus deferred requests.
func (e *engine) numWaiting() int { return e.waiting.len() + len(e.kv.xfers) + e.kv.ready.len() }

// numDeferred is the waiting requests vLLM reports with reason deferred:
// skipped for the LoRA budget in the last scheduling pass, or parked for
// a KV transfer.
func (e *engine) numDeferred() int {
	return min(e.lora.deferred, e.waiting.len()) + len(e.kv.xfers) + e.kv.ready.len()
}

// startTransfer takes the waiting request at index i off the queue,
// allocates blocks for its whole prompt and starts pulling its KV. It
// reports false, leaving the queue as it was, when the blocks are not free.
func (e *engine) startTransfer(i int) bool {
	r := e.waiting.at(i)
	need := e.blocksFor(r.numTokens)
	if need > e.freeBlocks {
		return false
	}
	e.waiting.removeAt(i)
	e.freeBlocks -= need
	r.blocks = need
	e.countPrefix(r)
	e.kv.extQueries += int64(r.prompt - r.cached)
	e.kv.extHits += int64(r.external)
	d := e.p.KVTransferBase + time.Duration(r.external)*e.p.KVTransferPerToken
	x := transfer{r: r, done: e.now + d, dur: d}
	if e.p.KVTransferFailRate > 0 {
		x.fail = e.rng.Float64() < e.p.KVTransferFailRate
	}
	at := len(e.kv.xfers)
	for at > 0 && e.kv.xfers[at-1].done > x.done {
		at--
	}
	e.kv.xfers = append(e.kv.xfers, transfer{})
	copy(e.kv.xfers[at+1:], e.kv.xfers[at:])
	e.kv.xfers[at] = x
	return true
}

// completeTransfer finishes the oldest transfer: the KV arrives, or the
// transfer fails (drawn at its start, or forced by FailKVTransfers).
func (e *engine) completeTransfer() {
	x := e.kv.xfers[0]
	e.kv.xfers = append(e.kv.xfers[:0], e.kv.xfers[1:]...)
	fail := x.fail
	if e.kv.forced > 0 {
		e.kv.forced--
		fail = true
	}
	x.r.remote = false
	if fail {
		e.transferFailed(x.r)
	} else {
		e.transferDone(x)
	}
	if !e.busy {
		e.startStep()
	}
}

// transferDone observes a good transfer as record_transfer does and makes
// the request ready to run with its pulled KV.
func (e *engine) transferDone(x transfer) {
	r := x.r
	bytes := int64(r.external) * int64(e.p.KVBytesPerToken)
	e.kv.transfers++
	e.kv.bytes += bytes
	e.h.kvXfer.observe(x.dur.Seconds())
	e.h.kvPost.observe(x.dur.Seconds() / 20)
	e.h.kvBytes.observe(float64(bytes))
	e.h.kvDesc.observe(float64(e.blocksFor(r.external) * nixlDescriptorsPerBlock))
	if e.p.KVNotifyFailRate > 0 && e.rng.Float64() < e.p.KVNotifyFailRate {
		e.kv.notifFailures++
	}
	r.computed = r.cached + r.external
	e.kv.ready.pushBack(r)
}

// transferFailed applies kv_load_failure_policy to r.
func (e *engine) transferFailed(r *request) {
	e.kv.failures++
	if e.p.KVLoadFailurePolicy == KVLoadRecompute {
		r.external = 0
		r.computed = r.cached
		e.kv.ready.pushBack(r)
		return
	}
	e.failRequest(r)
}

// failRequest finishes r with finished_reason="error" before it ever ran
// (see the package comment of this file for what vLLM observes).
func (e *engine) failRequest(r *request) {
	r.reason = reasonError
	r.totalWait += e.now - r.waitStart
	e.release(r)
	e.st.success[reasonError]++
	e.h.e2e.observe(seconds(e.now - r.arrival))
	e.h.promptTokens.observe(float64(r.prompt))
	e.h.genTokens.observe(0)
	e.h.maxGen.observe(0)
	e.h.paramsN.observe(1)
	if r.setMax {
		e.h.paramsMaxTokens.observe(float64(r.maxTokens))
	}
	e.h.prefillKV.observe(float64(r.prompt))
	e.logCompleted(r)
}

// scheduleReady runs requests whose KV has arrived, oldest first, before
// the waiting queue. They hold blocks for their prompt already.
func (e *engine) scheduleReady(budget int) int {
	for e.kv.ready.len() > 0 && budget > 0 && len(e.running) < e.p.MaxNumSeqs {
		r := e.kv.ready.front()
		n := min(r.numTokens-r.computed, budget)
		need := max(0, e.blocksFor(r.computed+n)-r.blocks)
		if need > e.freeBlocks || !e.lora.admissible(r) {
			break
		}
		e.kv.ready.popFront()
		e.freeBlocks -= need
		r.blocks += need
		e.enterRunning(r)
		e.batch = append(e.batch, newScheduledSeq(r, n))
		budget -= n
	}
	return budget
}

// expireOnFinish counts a prefill instance's request whose KV nobody pulls.
func (e *engine) expireOnFinish() {
	if e.kv.role == RolePrefill && e.p.KVExpireRate > 0 && e.rng.Float64() < e.p.KVExpireRate {
		e.kv.expired++
	}
}

// nixlFamilies are NixlPromMetrics's families (nixl/stats.py), registered
// after the speculative-decoding ones and before the rest.
func nixlFamilies() []family {
	return []family{
		hist("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
			func(e *engine) *histogram { return &e.h.kvXfer }),
		hist("vllm:nixl_post_time_seconds", "Histogram of transfer post time for NIXL KV Cache transfers.",
			func(e *engine) *histogram { return &e.h.kvPost }),
		hist("vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
			func(e *engine) *histogram { return &e.h.kvBytes }),
		hist("vllm:nixl_num_descriptors", "Histogram of number of descriptors per NIXL  KV Cache transfers.",
			func(e *engine) *histogram { return &e.h.kvDesc }),
		counter("vllm:nixl_num_failed_transfers_total", "Number of failed NIXL KV Cache transfers.",
			func(e *engine) float64 { return i64(e.kv.failures) }),
		counter("vllm:nixl_num_failed_notifications_total", "Number of failed NIXL KV Cache notifications.",
			func(e *engine) float64 { return i64(e.kv.notifFailures) }),
		counter("vllm:nixl_num_kv_expired_reqs_total", "Number of requests that had their KV expire. "+
			"NOTE: This metric is tracked on the P instance.", func(e *engine) float64 { return i64(e.kv.expired) }),
	}
}

// FailKVTransfers makes the next n KV transfers of a decode instance fail
// (spread over its data-parallel ranks, rank 0 first), as a NIXL error
// would. Each is counted in vllm:nixl_num_failed_transfers_total and its
// request follows kv_load_failure_policy.
func (f *Fleet) FailKVTransfers(instance, n int) error {
	return f.spreadKV(instance, n, RoleDecode, func(e *engine, k int) { e.kv.forced += k })
}

// ExpireKV counts n requests of a prefill instance whose KV expired before
// a decode instance pulled it (vllm:nixl_num_kv_expired_reqs_total),
// spread over its ranks.
func (f *Fleet) ExpireKV(instance, n int) error {
	return f.spreadKV(instance, n, RolePrefill, func(e *engine, k int) { e.kv.expired += int64(k) })
}

// spreadKV checks the instance's role, brings its engines to now and gives
// rank i its share of n.
func (f *Fleet) spreadKV(instance, n int, role string, apply func(*engine, int)) error {
	if instance < 0 || instance >= len(f.instances) {
		return fmt.Errorf("%w: %d (fleet has %d)", ErrNoInstance, instance, len(f.instances))
	}
	inst := f.instances[instance]
	if inst.cfg.Role != role {
		return fmt.Errorf("%w: instance %d has role %q, not %s", ErrInvalidConfig, instance, inst.cfg.Role, role)
	}
	if n < 1 {
		return fmt.Errorf("%w: count %d must be ≥ 1", ErrInvalidConfig, n)
	}
	until, _ := f.clock()
	ranks := len(inst.engines)
	for i, e := range inst.engines {
		e.mu.Lock()
		e.advanceTo(until)
		share := n / ranks
		if i < n%ranks {
			share++
		}
		apply(e, share)
		e.mu.Unlock()
	}
	return nil
}
