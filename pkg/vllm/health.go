package vllm

import (
	"fmt"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// EnginesNow is one sample per engine (EngineLabels: identity, engine,
// model) under the filters, from the running gauge both generations
// expose: what the health check counts as the fleet reporting now.
func (b Builder) EnginesNow(f models.Filters) string {
	return agg("group", b.EngineLabels(), b.EngineSelector(f))
}

// EnginesLastSeen is, per engine under the filters, the time in Unix
// seconds of its newest running-gauge sample in the lookback before the
// evaluation time: timestamp() returns each sample's own time and the
// subquery walks the lookback at the scrape interval (at least 1s), so an
// engine that stopped reporting is still listed with when it last did.
// Both durations are written in whole seconds, rounded down.
func (b Builder) EnginesLastSeen(f models.Filters, lookback, scrape time.Duration) string {
	sub := fmt.Sprintf("timestamp(%s)[%s:%s]", b.EngineSelector(f), wholeSeconds(lookback), wholeSeconds(max(scrape, time.Second)))
	return agg("max", b.EngineLabels(), "max_over_time("+sub+")")
}

// wholeSeconds writes a duration as PromQL seconds, rounded down ("90s").
func wholeSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d/time.Second))
}
