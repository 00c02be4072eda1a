package sim

import (
	"strconv"
)

// Family constructors. The value functions read engine fields; the caller
// holds the engine's lock.

func gauge(name, help string, v func(e *engine) float64) family {
	return family{name: name, help: help, typ: "gauge", series: func(e *engine, w *seriesWriter) { w.sample(v(e)) }}
}

func counter(name, help string, v func(e *engine) float64) family {
	return family{name: name, help: help, typ: "counter", series: func(e *engine, w *seriesWriter) { w.sample(v(e)) }}
}

func hist(name, help string, h func(e *engine) *histogram) family {
	return family{name: name, help: help, typ: "histogram", series: func(e *engine, w *seriesWriter) { w.histogram(h(e)) },
		hist: h}
}

func zero(*engine) float64 { return 0 }

func i64(v int64) float64 { return float64(v) }

// Help texts shared by both generations.
const (
	helpWaiting     = "Number of requests waiting to be processed."
	helpPreemptions = "Cumulative number of preemption from the engine."
	helpPromptTok   = "Number of prefill tokens processed."
	helpGenTok      = "Number of generation tokens processed."
	helpSuccess     = "Count of successfully processed requests."
	helpIteration   = "Histogram of number of tokens per engine_step."
	helpMaxGen      = "Histogram of maximum number of requested generation tokens."
	helpParamsN     = "Histogram of the n request parameter."
	helpMaxTokens   = "Histogram of the max_tokens request parameter."
	helpTTFT        = "Histogram of time to first token in seconds."
	helpQueue       = "Histogram of time spent in WAITING phase for request."
	helpInference   = "Histogram of time spent in RUNNING phase for request."
	helpPrefill     = "Histogram of time spent in PREFILL phase for request."
	helpDecode      = "Histogram of time spent in DECODE phase for request."
	helpCacheConfig = "Information of the LLMEngine CacheConfig"
)

// commonCounters are the token and preemption counters of both generations.
func commonCounters() []family {
	return []family{
		counter("vllm:num_preemptions_total", helpPreemptions, func(e *engine) float64 { return i64(e.st.preemptions) }),
		counter("vllm:prompt_tokens_total", helpPromptTok, func(e *engine) float64 { return i64(e.st.promptTokens) }),
	}
}

// requestHistograms are the per-request token histograms of both
// generations, observed when a request finishes.
func requestHistograms() []family {
	return []family{
		finishedHist("vllm:request_prompt_tokens", helpPromptTok, func(h *hists) *histogram { return &h.promptTokens }),
		finishedHist("vllm:request_generation_tokens", helpGenTok, func(h *hists) *histogram { return &h.genTokens }),
		hist("vllm:iteration_tokens_total", helpIteration, func(e *engine) *histogram { return &e.h.iteration }),
		hist("vllm:request_max_num_generation_tokens", helpMaxGen, func(e *engine) *histogram { return &e.h.maxGen }),
		hist("vllm:request_params_n", helpParamsN, func(e *engine) *histogram { return &e.h.paramsN }),
		finishedHist("vllm:request_params_max_tokens", helpMaxTokens, func(h *hists) *histogram { return &h.paramsMaxTokens }),
	}
}

// phaseHistograms are e2e, queue, inference, prefill and decode time.
func phaseHistograms(e2eHelp string) []family {
	return []family{
		finishedHist("vllm:e2e_request_latency_seconds", e2eHelp, func(h *hists) *histogram { return &h.e2e }),
		finishedHist("vllm:request_queue_time_seconds", helpQueue, func(h *hists) *histogram { return &h.queue }),
		finishedHist("vllm:request_inference_time_seconds", helpInference, func(h *hists) *histogram { return &h.inference }),
		finishedHist("vllm:request_prefill_time_seconds", helpPrefill, func(h *hists) *histogram { return &h.prefill }),
		finishedHist("vllm:request_decode_time_seconds", helpDecode, func(h *hists) *histogram { return &h.decode }),
	}
}

// successFamily writes request_success_total. V1 pre-creates every reason;
// V0 created a series only once a request finished that way, and knew only
// stop, length and abort. With the priority label, every reason is written
// for each class that has finished a request (whether vLLM pre-creates
// classes was not read; a zero series and an absent one read the same
// through rate()).
func successFamily(gen Generation) family {
	return family{"vllm:request_success_total", helpSuccess, "counter", func(e *engine, w *seriesWriter) {
		if e.prio.label {
			for c, h := range e.prio.h {
				for r := range numReasons {
					if h != nil {
						w.sample(i64(e.prio.success[c][r]), "finished_reason", reasonNames[r], "priority", priorityClasses[c])
					}
				}
			}
			return
		}
		for r := range numReasons {
			if gen == V1 || (r <= reasonAbort && e.st.success[r] > 0) {
				w.sample(i64(e.st.success[r]), "finished_reason", reasonNames[r])
			}
		}
	}, nil}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func itoa(n int) string { return strconv.Itoa(n) }
