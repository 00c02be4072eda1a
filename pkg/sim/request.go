package sim

import "time"

// finishReason indexes vLLM's finished_reason label values, in the order V1
// pre-creates them.
type finishReason int

const (
	reasonStop finishReason = iota
	reasonLength
	reasonAbort
	reasonError
	reasonRepetition
	numReasons
)

var reasonNames = [numReasons]string{"stop", "length", "abort", "error", "repetition"}

// request is one simulated request. Token bookkeeping follows vLLM V1:
// numTokens is prompt plus sampled output; computed is how many of them have
// KV entries. A request samples a new token in the step that makes computed
// reach numTokens, so a decoding request computes exactly one token a step.
// Recompute preemption resets computed to 0 and keeps the sampled output,
// so the request later prefills prompt+output again.
type request struct {
	id        uint64
	arrival   time.Duration
	prompt    int
	maxTokens int
	target    int          // outputs after which it finishes
	reason    finishReason // reasonAbort: aborted after target outputs, by the client or the engine
	// clientAbort: the client disconnects (no finished metric); else an
	// abort reason is one the engine core reports (a normal finish).
	clientAbort bool
	cached      int  // prompt tokens found in the prefix cache, a whole number of blocks
	setMax      bool // the request set max_tokens (else vLLM's default applied)
	adapter     int  // LoRA adapter index; -1 without LoRA
	priority    int  // vLLM's request priority: lower is served first under the priority policy
	// remote: a decode instance must pull external prompt tokens of KV
	// before running it; external stays the number pulled.
	remote        bool
	external      int
	prefixCounted bool // the prefix-cache counters have seen it
	// With KV offloading (offload.go): the shared prefix the request's
	// first reusable tokens come from, how many tokens that is, how many
	// of the cached ones came from the CPU tier, how many shared blocks it
	// holds on the GPU, and the next block to offer to the tier.
	doc, reusable, host, held, stored int

	numTokens int
	outputs   int
	computed  int
	blocks    int
	done      bool

	waitStart      time.Duration // when it last joined the waiting queue
	totalWait      time.Duration // all waiting episodes, preemptions included
	queueTime      time.Duration // first episode only, as vLLM reports it
	scheduled      bool
	firstScheduled time.Duration
	firstToken     time.Duration
	lastToken      time.Duration
	preemptions    int
	// unreported are the preemption-log sequence numbers of preemptions
	// the frontend has not counted yet: vLLM counts them with the
	// request's next output.
	unreported []uint64
}

// scheduledSeq is one request's share of a step.
type scheduledSeq struct {
	r       *request
	n       int  // tokens computed this step
	prefill bool // prompt or recompute tokens, as opposed to one decode token
	spec    int  // draft tokens verified with the decode token (speculative decoding)
}

// newScheduledSeq classifies the work: a request that has sampled output and
// lacks exactly one KV entry is decoding; anything else is (re)prefill.
func newScheduledSeq(r *request, n int) scheduledSeq {
	decode := r.outputs > 0 && r.numTokens-r.computed == 1
	return scheduledSeq{r: r, n: n, prefill: !decode}
}
