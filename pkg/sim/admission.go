package sim

// Admission control as vLLM's API server does it (vllm/v1/engine/async_llm.py
// check_admission, PR #49445) and the families vLLM 0.32 adds.

// Reasons an arrival is refused, as admission_rejections_total labels them.
const (
	admissionReqs = iota
	admissionTokens
	numAdmissionReasons
)

// admissionReasons are the reason label values. vLLM's exact strings were not
// read from its source (PR #55812 says the label names which limit fired);
// the simulator names the flag.
var admissionReasons = [numAdmissionReasons]string{"max_num_queued_reqs", "max_num_queued_tokens"}

// admission reports whether an arrival is refused and why. The request limit
// is checked first: unfinished requests (waiting, in KV transfer, running)
// plus this one (n = 1) must not exceed it. Then the token limit: the prompt
// tokens of requests that have produced no output yet must be below it; the
// new request's own prompt does not count. Neither check draws a random
// number, so limits that never fire leave the random stream unchanged.
func (e *engine) admission() (int, bool) {
	if limit := e.p.MaxNumQueuedReqs; limit > 0 && e.numWaiting()+len(e.running)+1 > limit {
		return admissionReqs, true
	}
	if limit := e.p.MaxNumQueuedTokens; limit > 0 && e.prefillingTokens() >= limit {
		return admissionTokens, true
	}
	return 0, false
}

// prefillingTokens sums the prompts of requests the frontend still sees in
// prefill (OutputProcessor.get_num_queued_tokens: no output yet), whole
// prompts, however far their chunked prefill has come.
func (e *engine) prefillingTokens() int {
	n := 0
	add := func(r *request) {
		if r.outputs == 0 {
			n += r.prompt
		}
	}
	e.eachWaiting(add)
	for _, r := range e.running {
		add(r)
	}
	return n
}

// release032Families are the families vLLM 0.32 exposes beyond the
// reference profile, registered before cache_config_info.
func release032Families() []family {
	return []family{
		admissionRejectionsFamily(),
		finishedHist("vllm:request_num_preemptions", "Histogram of the number of preemptions per finished request.",
			func(h *hists) *histogram { return &h.numPreemptions }),
		schedulerPolicyFamily(),
	}
}

// admissionRejectionsFamily is admission_rejections_total: counted in the API
// server, so it has model_name and reason but no engine label; rank 0 writes
// the instance's total over its ranks. Both reasons are written from the
// start (whether vLLM pre-creates them was not read; a zero series and an
// absent one read the same through rate()).
func admissionRejectionsFamily() family {
	return family{name: "vllm:admission_rejections_total", help: "Number of admission attempts rejected by the frontend.",
		typ: "counter", series: func(e *engine, w *seriesWriter) {
			if e.rank != 0 {
				return
			}
			for r, reason := range admissionReasons {
				var n int64
				for _, s := range e.siblings {
					n += s.st.admissionRejected[r]
				}
				w.line(w.name, i64(n), []labelPair{{"model_name", e.model}}, "reason", reason)
			}
		}}
}

// schedulerPolicyFamily is scheduler_policy_info: both policies, the active
// one 1 (tests/v1/metrics/test_priority_metrics.py test_scheduler_policy_info).
func schedulerPolicyFamily() family {
	return family{name: "vllm:scheduler_policy_info", help: "Scheduler policy in use (1) among the known policies.",
		typ: "gauge", series: func(e *engine, w *seriesWriter) {
			w.sample(b2f(!e.priorityOn()), "policy", PolicyFCFS)
			w.sample(b2f(e.priorityOn()), "policy", PolicyPriority)
		}}
}
