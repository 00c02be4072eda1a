package health

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// scrapeTolerance is how far apart, as a ratio either way, the setting and
// the measured spacing may be before Save & test warns: jitter and a
// target or two on another interval stay well inside it, while the
// mistakes that matter (5s set against a 1m Prometheus: 12x) are far out.
const scrapeTolerance = 1.5

// scrapeWindow is how far back the spacing is measured: at least 5m, and
// ten intervals of the setting, so a store scraping far slower than the
// setting still shows three samples when the setting is long.
func scrapeWindow(setting time.Duration) time.Duration {
	return max(5*time.Minute, 10*setting)
}

// scrapeStep is the walk's step: half the setting, within 100ms and 1s.
// Spacings below the step read as the step, which still tells a 500ms
// store from a 5s setting.
func scrapeStep(setting time.Duration) time.Duration {
	return min(time.Second, max(100*time.Millisecond, setting/2))
}

// scrapeNote warns when the scrapeInterval setting disagrees with how often
// the store really holds the vLLM series' samples. A wrong setting is not
// a failure (queries answer), but too short a setting makes rate windows
// ($__rate_interval, four setting intervals at least) hold fewer than two
// samples, and rate panels come out empty. A failed or empty measurement
// (a fleet too young for three samples) says nothing.
func scrapeNote(ctx context.Context, p Prometheus, s models.Settings, now time.Time) string {
	window := scrapeWindow(s.ScrapeInterval)
	v, ok, err := vllm.FirstValue(p.Query)(ctx, builder(ctx, s).ScrapeSpacing(window, scrapeStep(s.ScrapeInterval)), now)
	if err != nil || !ok || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return ""
	}
	measured := roundSpacing(time.Duration(v * float64(time.Second)))
	return scrapeMismatch(s.ScrapeInterval, measured, window)
}

// scrapeMismatch is the warning for a setting against a measured spacing,
// or "" when they agree within scrapeTolerance.
func scrapeMismatch(setting, measured, window time.Duration) string {
	ratio := float64(measured) / float64(setting)
	if setting <= 0 || measured <= 0 || (ratio <= scrapeTolerance && ratio >= 1/scrapeTolerance) {
		return ""
	}
	effect := "rate windows ($__rate_interval) hold fewer than two samples and rate panels come out empty"
	if ratio < 1 {
		effect = "steps and rate windows are wider than they need to be"
	}
	return fmt.Sprintf(". Warning: the scrape interval setting is %s, but the vLLM series' samples are %s apart (measured over the last %s): %s; set scrapeInterval to %s",
		vllm.ShortDuration(setting), vllm.ShortDuration(measured), vllm.ShortDuration(window), effect, vllm.ShortDuration(measured))
}

// roundSpacing rounds a measured spacing to what a scrape config would
// say: whole seconds from 2s, tenths of a second below.
func roundSpacing(d time.Duration) time.Duration {
	if d >= 2*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
