package vllm

import (
	"fmt"
	"math"
	"time"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// SatCPUThrottled names the saturation query's throttling expression: the
// CFS-throttled share of the group's worst vLLM container (cAdvisor).
const SatCPUThrottled = "cpu_throttled"

// ThrottleEvidence is the throttled share of CFS periods from which a
// verdict names throttling in its evidence: kube-prometheus' CPUThrottlingHigh
// alert fires at 25%, the share at which a container's latency is
// commonly seen to suffer.
const ThrottleEvidence = 0.25

// SaturationThrottleSignal is the saturation query's throttling expression
// per grouping: evidence only, never part of a verdict (throttleEvidence).
// Empty where cAdvisor is not scraped or no container has a CPU limit;
// ok is false where the cAdvisor probe found no throttling series
// (cadvisor.go): nothing is asked of Prometheus then.
func (b Builder) SaturationThrottleSignal(g models.Grouping, f models.Filters, window time.Duration, cs models.ContainerSettings) (SignalExpr, bool) {
	if !b.containerAnswers(ContainerCPUThrottled) {
		return SignalExpr{}, false
	}
	return SignalExpr{SatCPUThrottled, b.ContainerWorstBy(ContainerCPUThrottled, b.GroupLabels(g), f, interval.PromDuration(window), cs)}, true
}

// throttleEvidence is the clause a reason gains when the group's container
// was CPU-throttled in some steps: the worst share and how many steps,
// and why it matters. A throttled vLLM server's API process tokenizes,
// schedules and streams late, so TTFT rises while the GPU waits: queueing
// or high latency at low GPU use. "" when it was not throttled.
func throttleEvidence(steps []SatStep) string {
	n, worst := 0, 0.0
	for _, s := range steps {
		if math.IsNaN(s.CPUThrottled) || s.CPUThrottled < ThrottleEvidence {
			continue
		}
		n++
		worst = math.Max(worst, s.CPUThrottled)
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; its container was CPU-throttled beside it (up to %s of CFS periods, in %d of %d steps): "+
		"a throttled vLLM server tokenizes, schedules and streams late, which raises TTFT while the GPU waits; raise or remove its CPU limit",
		pct(worst), n, len(steps))
}
