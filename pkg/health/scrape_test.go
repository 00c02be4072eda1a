package health

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
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

// spacingProm answers every query with one sample of value v (or nothing,
// or err) and records the range MetricNames is asked for.
type spacingProm struct {
	v          float64
	empty      bool
	err        error
	start, end *time.Time
}

func (spacingProm) Host() string { return "prom:9090" }

func (spacingProm) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (f spacingProm) MetricNames(_ context.Context, _ string, start, end time.Time) ([]string, error) {
	if f.start != nil && f.start.IsZero() { // the first listing: the fleet's names
		*f.start, *f.end = start, end
	}
	return []string{"vllm:num_requests_running"}, nil
}

func (f spacingProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	if f.err != nil || f.empty {
		return nil, nil, f.err
	}
	return model.Vector{{Metric: model.Metric{}, Value: model.SampleValue(f.v)}}, nil, nil
}

// TestScrapeNote: the measured spacing (seconds) against a 5s setting: a
// spacing 12 times the setting warns with it rounded as a scrape config
// writes it; one that agrees, none, an error or a value that is no spacing
// say nothing.
func TestScrapeNote(t *testing.T) {
	s := models.Settings{ScrapeInterval: 5 * time.Second}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		p    spacingProm
		want string
	}{
		{"a minute apart", spacingProm{v: 60}, "samples are 1m apart"},
		{"rounded to whole seconds", spacingProm{v: 29.6}, "samples are 30s apart"},
		{"agrees", spacingProm{v: 5.2}, ""},
		{"no answer", spacingProm{empty: true}, ""},
		{"an error", spacingProm{v: 60, err: errors.New("boom")}, ""},
		{"zero", spacingProm{v: 0}, ""},
		{"negative", spacingProm{v: -60}, ""},
		{"NaN", spacingProm{v: math.NaN()}, ""},
		{"infinite", spacingProm{v: math.Inf(1)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scrapeNote(context.Background(), tt.p, s, now)
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tt.want)
		})
	}
}

// TestCheckListsNamesOverTheLookback: the name listing spans the hour
// before now, not after it.
func TestCheckListsNamesOverTheLookback(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var start, end time.Time
	Check(context.Background(), spacingProm{v: 5, start: &start, end: &end}, models.Settings{ScrapeInterval: 5 * time.Second}, now)
	require.Equal(t, now.Add(-time.Hour), start)
	require.Equal(t, now, end)
}
