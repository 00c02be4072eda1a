package health

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// detectionKey carries Check's detection to the helpers' builders: every
// helper of the check reads the same names and joins the same labels, and
// their signatures stay those of a check without OTLP.
type detectionKey struct{}

func withDetection(ctx context.Context, d vllm.Detection) context.Context {
	return context.WithValue(ctx, detectionKey{}, d)
}

// probe asks the store for one target_info and one running series
// (vllm.Builder.ResourceProbe) and plans the join; unlike the queries'
// detector it always asks, so Save & test recognises an OTLP-fed fleet
// whatever the profile. A failed probe plans nothing and says nothing.
func probe(ctx context.Context, p Prometheus, s models.Settings, now time.Time) vllm.Builder {
	b := vllm.ForSettings(s)
	v, _, err := p.Query(ctx, b.ResourceProbe(), now)
	if err != nil {
		return b
	}
	return b.WithProbe(v)
}

// otlpNote says that the fleet arrives over OpenTelemetry, under which
// translation, which labels are joined from target_info, which wanted
// labels are nowhere, counters spelled two ways, and whether liveness has
// up to go by.
func otlpNote(ctx context.Context, p Prometheus, s models.Settings, det vllm.Detection, now time.Time) string {
	if !det.OTLP.TargetInfo && !det.TrimmedCounters {
		return ""
	}
	var parts []string
	if det.OTLP.TargetInfo {
		parts = append(parts, "fed over OpenTelemetry (target_info found); translation: "+det.Translation())
	} else {
		parts = append(parts, "counters stored without _total (an OTLP pipeline that trims suffixes); read under both spellings")
	}
	if det.Join.Active() {
		var from []string
		for _, l := range det.Join.Labels() {
			from = append(from, l+" from "+det.Join.From[l])
		}
		parts = append(parts, "labels joined from target_info on job and instance: "+strings.Join(from, ", "))
	}
	if u := det.UnresolvedText(); u != "" {
		parts = append(parts, u)
	}
	if two := det.TwoSpellings(); len(two) > 0 {
		parts = append(parts, fmt.Sprintf("counters spelled two ways (%s): each engine is read once, under the _total spelling where it has both", strings.Join(two, ", ")))
	}
	if det.OTLP.TargetInfo && !hasUp(ctx, p, s, now) {
		parts = append(parts, "no up series for the engines (the pipeline does not send the scrape series): down and stale come from the engines' own samples, and last-seen from their newest")
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// hasUp reports whether the store has up for any vLLM server.
func hasUp(ctx context.Context, p Prometheus, s models.Settings, now time.Time) bool {
	v, _, err := p.Query(ctx, builder(ctx, s).UpForEngines(), now)
	return err != nil || len(v) > 0
}
