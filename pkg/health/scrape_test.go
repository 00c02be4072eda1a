package health

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

// TestScrapeMismatch: a setting within 1.5x of the measured spacing either
// way says nothing; beyond, the warning names both values, the window, the
// effect and what to set.
func TestScrapeMismatch(t *testing.T) {
	tests := []struct {
		name              string
		setting, measured time.Duration
		want              string
	}{
		{"agree", time.Minute, time.Minute, ""},
		{"1.5x slower: still inside", 10 * time.Second, 15 * time.Second, ""},
		{"1.5x faster: still inside", 15 * time.Second, 10 * time.Second, ""},
		{"the generic Helm values on prometheus-community/prometheus", 5 * time.Second, time.Minute,
			". Warning: the scrape interval setting is 5s, but the vLLM series' samples are 1m apart (measured over the last 5m): rate windows ($__rate_interval) hold fewer than two samples and rate panels come out empty; set scrapeInterval to 1m"},
		{"just beyond, slower", 10 * time.Second, 15100 * time.Millisecond, "set scrapeInterval to 15s100ms"},
		{"setting too long", time.Minute, 15 * time.Second, "steps and rate windows are wider than they need to be; set scrapeInterval to 15s"},
		{"no measurement", time.Minute, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scrapeMismatch(tt.setting, tt.measured, 5*time.Minute)
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tt.want)
			// What it says to set is a value the setting accepts, and the measured one.
			_, set, ok := strings.Cut(got, "set scrapeInterval to ")
			require.True(t, ok)
			d, err := interval.ParseDuration(set)
			require.NoError(t, err)
			require.Equal(t, tt.measured, d)
		})
	}
}

func TestScrapeWindowAndStep(t *testing.T) {
	tests := []struct {
		setting, window, step time.Duration
	}{
		{5 * time.Second, 5 * time.Minute, time.Second},
		{time.Minute, 10 * time.Minute, time.Second},
		{500 * time.Millisecond, 5 * time.Minute, 250 * time.Millisecond},
		{50 * time.Millisecond, 5 * time.Minute, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.setting.String(), func(t *testing.T) {
			require.Equal(t, tt.window, scrapeWindow(tt.setting))
			require.Equal(t, tt.step, scrapeStep(tt.setting))
		})
	}
}

func TestRoundSpacing(t *testing.T) {
	require.Equal(t, 60*time.Second, roundSpacing(59600*time.Millisecond))
	require.Equal(t, 2*time.Second, roundSpacing(2400*time.Millisecond))
	require.Equal(t, 1500*time.Millisecond, roundSpacing(1480*time.Millisecond))
}
