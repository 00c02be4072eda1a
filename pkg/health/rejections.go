package health

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rejectWindow is how far back Save & test looks for rejections.
const rejectWindow = 5 * time.Minute

// rejectNote warns when any server refused requests at its queue limits
// (vLLM 0.32's admission_rejections_total) over the last rejectWindow. It
// is a warning, not a failure: the limits work as configured, but those
// clients got HTTP 503 and the queue panels alone would not show it. A
// fleet without the family, or a failed query, says nothing.
func rejectNote(ctx context.Context, p Prometheus, s models.Settings, det vllm.Detection, now time.Time) string {
	if !det.HasSignal(vllm.Rejections) {
		return ""
	}
	b := builder(ctx, s)
	vec, _, err := p.Query(ctx, b.RejectingServers(rejectWindow), now)
	if err != nil || len(vec) == 0 {
		return ""
	}
	parts := make([]string, 0, len(vec))
	for _, smp := range vec {
		ls := map[string]string{}
		for k, v := range smp.Metric {
			ls[string(k)] = string(v)
		}
		parts = append(parts, fmt.Sprintf("%s %.2f/s", b.InstanceOf(ls), float64(smp.Value)))
	}
	sort.Strings(parts)
	return fmt.Sprintf(". Warning: %d server(s) refused requests at their queue limit (--max-num-queued-reqs / --max-num-queued-tokens, HTTP 503) over the last %s: %s; add replicas or raise the limits",
		len(parts), vllm.ShortDuration(rejectWindow), firstFew(parts))
}
