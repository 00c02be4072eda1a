package sim

// Speculative decoding, as vLLM V1 counts it (vllm/v1/spec_decode/metrics.py):
// every decode step of a request verifies a draft of k tokens
// (SpecDecodingStats.observe_draft: one draft, k draft tokens, the accepted
// count, and one per accepted position). The simulator draws acceptance
// position by position: position i is accepted when position i-1 was and a
// draw falls below SpecAcceptance, so P(position i) = a^(i+1). The step
// emits the accepted tokens plus the bonus token; tokens past the
// request's end are discarded (vLLM drops tokens after a stop), while the
// draft still counts.

// specStats are the engine's speculative-decoding totals.
type specStats struct {
	drafts, draftTokens, accepted int64
	perPos                        []int64 // accepted tokens per draft position
}

// specOn reports whether the engine speculates: V1 with SpecTokens > 0.
func (e *engine) specOn() bool { return e.gen == V1 && e.p.SpecTokens > 0 }

// specDraft is how many draft tokens a decoding request verifies this step:
// SpecTokens, fewer when the token budget is short (vLLM trims scheduled
// spec tokens to the budget), none for prefill work.
func (e *engine) specDraft(s scheduledSeq, budget int) int {
	if !e.specOn() || s.prefill {
		return 0
	}
	return max(0, min(e.p.SpecTokens, budget))
}

// speculate verifies a draft of k tokens and returns how many were
// accepted, counting it as observe_draft does.
func (e *engine) speculate(k int) int {
	acc := 0
	for acc < k && e.rng.Float64() < e.p.SpecAcceptance {
		acc++
	}
	e.spec.drafts++
	e.spec.draftTokens += int64(k)
	e.spec.accepted += int64(acc)
	for i := range acc {
		e.spec.perPos[i]++
	}
	return acc
}

// finishSpecSeq applies a decode step with a draft: the sampled token, the
// accepted drafts, one output for the frontend.
func (e *engine) finishSpecSeq(s scheduledSeq) {
	acc := e.speculate(s.spec)
	s.r.computed += s.n
	e.emitTokens(s.r, acc+1)
	if !s.r.done {
		// Accepted drafts have KV; the newest sampled token does not yet.
		s.r.computed = s.r.numTokens - 1
	}
}

// specFamilies are SpecDecodingProm's counters, registered before every
// other vLLM family, with model_name and engine.
func specFamilies() []family {
	return []family{
		counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.",
			func(e *engine) float64 { return i64(e.spec.drafts) }),
		counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.",
			func(e *engine) float64 { return i64(e.spec.draftTokens) }),
		counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.",
			func(e *engine) float64 { return i64(e.spec.accepted) }),
		{name: "vllm:spec_decode_num_accepted_tokens_per_pos_total", help: "Accepted tokens per draft position.",
			typ: "counter", series: func(e *engine, w *seriesWriter) {
				for i, v := range e.spec.perPos {
					w.sample(i64(v), "position", itoa(i))
				}
			}},
	}
}
