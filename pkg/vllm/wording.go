package vllm

import (
	"fmt"
	"time"
)

// What vLLM's latency histograms observe (reference: current-semantics.md):
// inter-token latency is one observation per gap between two outputs of a
// request; queue time runs from a request's first QUEUED event to its first
// SCHEDULED one and, like the other per-request latencies, is observed when
// the request finishes; a request the client aborts is never observed.

// LatencyText says what the quantiles of key describe, for the waitTime
// query; live says the Little's-law wait is shown too. "" when there is
// nothing to add.
func LatencyText(key SignalKey, live bool) string {
	switch key {
	case ITL:
		return "Inter-token latency is recorded once per gap between two tokens of a request, so its quantiles and mean are of token gaps, not of requests: a long answer weighs more than a short one."
	case QueueTime:
		txt := "Queue time runs from a request's first queueing to its first scheduling (a wait after a preemption is not included) and is recorded only when the request finishes: " +
			"requests still waiting or running are not in the quantiles yet, and requests the client aborted never are."
		if !live {
			txt += " Turn on live to add the Little's-law wait, which counts the requests waiting now."
		}
		return txt
	}
	return "vLLM records this latency when a request finishes and never for a request the client aborted: after aborts, the quantiles describe only the requests that finished."
}

// LatencyHeatmapText says what a cell of key's heatmap counts, for the
// waitTime query's heatmap format, with the step it spans.
func LatencyHeatmapText(key SignalKey, step time.Duration) string {
	what, when := "requests", "when the request finishes, so requests still waiting or running are not counted yet and requests the client aborted never are"
	switch key {
	case ITL:
		what, when = "token gaps", "once per gap between two tokens of a request, so a long answer adds many"
	case TTFT:
		when = "at the request's first token, so requests still waiting are not counted yet"
	}
	return fmt.Sprintf("Each cell counts the %s recorded in the step (%s) with a latency up to the bucket's bound (seconds) and above the bound below it; +Inf holds those above the highest bound. vLLM records this latency %s.",
		what, step, when)
}

// LiveWaitText explains the live wait (Builder.liveWait).
func LiveWaitText() string {
	return "The live wait is Little's law: the requests waiting now divided by the rate at which queue times are recorded, which is when requests finish " +
		"(vLLM records a queue time at the end of a request, not when it is scheduled). It counts requests still waiting, and it runs high while requests finish more slowly than they leave the queue."
}

// AttainmentText says what the slo query's attainment is a share of.
func AttainmentText(key SignalKey) string {
	if key == ITL {
		return "For itl, attainment is the share of token gaps (vLLM records every gap between two tokens of a request) at or under the bound, not the share of requests."
	}
	return "Attainment is the share of finished requests at or under the bound: vLLM never records a request the client aborted, so after aborts it describes only the requests that finished."
}
