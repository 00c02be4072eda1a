package vllm

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

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
	sub := fmt.Sprintf("%s[%s:%s]", b.timestampUnion(Running, f), wholeSeconds(lookback), wholeSeconds(max(scrape, time.Second)))
	return agg("max", b.EngineLabels(), "max_over_time("+sub+")")
}

// RejectingServers is, per server and model, the requests per second it
// refused at its queue limits over window, only where that is above zero:
// what Save & test warns about. vLLM counts rejections in the API server
// (no engine label).
func (b Builder) RejectingServers(window time.Duration) string {
	gl := append(append([]string(nil), b.IdentityLabels()...), "model_name")
	return agg("sum", gl, b.rateUnion(Rejections, models.Filters{}, "", wholeSeconds(window))) + " > 0"
}

// wholeSeconds writes a duration as PromQL seconds, rounded down ("90s").
func wholeSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d/time.Second))
}

// ScrapeSpacing is the median, over the engines, of the mean spacing in
// seconds between the running gauge's samples in the window before the
// evaluation time: what the store's scrapes really are, to hold against
// the scrapeInterval setting. timestamp() of a selector is a sample's own
// time; walked at the step and kept only where it is newer than one step,
// it holds each sample's time once (spacings from one step up), so
// (newest − oldest) / (samples − 1) is the spacing however young the
// series; only series with at least three samples count. Neither changes()
// (VictoriaMetrics counts a young series' first value as a change) nor a
// plain count_over_time over the window (which reads a young series as a
// slow one) would do. timestamp() wraps each selector, never their union:
// of anything but a selector it returns the evaluation time.
func (b Builder) ScrapeSpacing(window, step time.Duration) string {
	m := b.matchers(models.Filters{})
	var parts []string
	for _, n := range b.names(Running) {
		parts = append(parts, "timestamp("+selector(n, m)+")")
	}
	times := strings.Join(parts, " or ")
	if len(parts) > 1 {
		times = "(" + times + ")"
	}
	walk := fmt.Sprintf("(%s > time() - %g)[%s:%s]", times, step.Seconds(), wholeSeconds(window), model.Duration(step))
	return fmt.Sprintf("quantile(0.5, (max_over_time(%s) - min_over_time(%s)) / ((count_over_time(%s) - 1) >= 2))", walk, walk, walk)
}
