package health

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// history is what the lookback says about the fleet: every engine that
// reported in it, how many of those are not reporting now, and when the
// newest of the missing ones last reported.
type history struct {
	seen     fleet
	missing  int
	lastSeen time.Time
}

// recentFleet finds every engine that reported in the lookback and when
// each last did, so a fleet that is gone (or partly gone) is told apart
// from one that never existed. timestamp() of a selector is the sample's
// own time; the subquery walks the lookback at the scrape interval
// (vllm.Builder.EnginesLastSeen).
func recentFleet(ctx context.Context, p Prometheus, s models.Settings, nowFleet model.Vector, now time.Time) (history, error) {
	b := builder(ctx, s)
	vec, _, err := p.Query(ctx, b.EnginesLastSeen(models.Filters{}, lookback, s.ScrapeInterval), now)
	if err != nil {
		return history{}, err
	}
	h := history{seen: tally(vec, b)}
	present := map[string]bool{}
	for _, smp := range nowFleet {
		present[engineKey(smp.Metric, b)] = true
	}
	for _, smp := range vec {
		if present[engineKey(smp.Metric, b)] || math.IsNaN(float64(smp.Value)) {
			continue
		}
		h.missing++
		if t := time.UnixMilli(int64(float64(smp.Value) * 1000)); t.After(h.lastSeen) {
			h.lastSeen = t
		}
	}
	return h, nil
}

func engineKey(m model.Metric, b vllm.Builder) string {
	return instanceOf(b, m) + "\x00" + string(m["engine"]) + "\x00" + string(m["model_name"])
}

// ago says how long before now t was, rounded for a person, and when.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	d := now.Sub(t).Round(time.Second)
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	return fmt.Sprintf("%s ago (%s)", d, t.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// goneMessage is the health message when vLLM series were in the lookback
// but none is reporting now.
func goneMessage(server string, s models.Settings, h history, now time.Time) string {
	return fmt.Sprintf("%s had vLLM series in the last hour (%s) but has none now: last seen %s. Check: "+
		"1) whether the vLLM servers or their scrape targets are down (Prometheus' Targets page, up == 0 for the vLLM job); "+
		"2) whether scrapes fail (timeouts, TLS, authentication, a changed port); "+
		"3) whether vLLM was restarted with --disable-log-stats, which turns its metrics off; "+
		"4) whether the scrape config's selector or relabelling, the metric prefix %q or the instance label %q still match the fleet.",
		server, h.seen.summary(), ago(h.lastSeen, now), s.MetricPrefix, s.InstanceLabel)
}

// missingNote is appended to an OK message when some engines seen in the
// lookback are not reporting now.
func missingNote(h history, now time.Time) string {
	if h.missing <= 0 {
		return ""
	}
	return fmt.Sprintf(". Warning: %d of the %s seen in the last hour are missing now (last seen %s): check their targets in Prometheus",
		h.missing, plural(h.seen.engines, "engine"), ago(h.lastSeen, now))
}
