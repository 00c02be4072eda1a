package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestScrapeTroubles: a server is named when up flapped (at least twice)
// or its slowest scrape took over half the timeout: scrape_timeout_seconds
// where stored, else the assumed one. A server that changed once (came up
// or went down) and scrapes quickly is not; neither is one at exactly half.
func TestScrapeTroubles(t *testing.T) {
	srv := func(inst string, v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst)}, Value: model.SampleValue(v)}
	}
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	vecs := map[string]model.Vector{
		vllm.FleetUpChanges: {srv("flap:1", 4), srv("once:1", 1), srv("twice:1", 2)},
		vllm.FleetScrapeDuration: {srv("flap:1", 0.1), srv("once:1", 0.1), srv("slow:1", 6), srv("half:1", 5), srv("stored:1", 6),
			srv("fast:1", 0.2), srv("zero:1", 6)},
		// A zero timeout is no timeout: the assumed one stands.
		vllm.FleetScrapeTimeout: {srv("stored:1", 30), srv("fast:1", 0.3), srv("zero:1", 0)},
	}
	got := scrapeTroubles(b, vecs, 10*time.Second)
	require.Equal(t, []scrapeTrouble{
		{server: "fast:1", slowest: 0.2, timeout: 0.3},
		{server: "flap:1", changes: 4, slowest: 0.1, timeout: 10},
		{server: "slow:1", slowest: 6, timeout: 10},
		{server: "twice:1", changes: 2, timeout: 10},
		{server: "zero:1", slowest: 6, timeout: 10},
	}, got)
	note := scrapeTroubleNote(got, 10*time.Minute)
	for _, want := range []string{
		". Warning: the scrapes of 5 vLLM servers fail now and then or come near the scrape timeout: ",
		"fast:1 (a scrape took 0.2s, 67% of the 0.3s timeout), flap:1 (up changed 4 times in the last 10m), slow:1 (a scrape took 6s, 60% of the 10s timeout) and 2 more.",
		"raise the scrape job's scrape_timeout", "separate port", "lower its load",
	} {
		require.Contains(t, note, want)
	}
	require.Empty(t, scrapeTroubleNote(nil, 10*time.Minute))
	both := scrapeTrouble{server: "x", changes: 3, slowest: 2, timeout: 2}
	require.Equal(t, "x (up changed 3 times in the last 10m; a scrape took 2s, 100% of the 2s timeout)", both.describe(10*time.Minute))
	// Exactly half the timeout is not yet slow: only more than slowShare is.
	half := scrapeTrouble{server: "y", changes: 2, slowest: 1, timeout: 2}
	require.Equal(t, "y (up changed 2 times in the last 10m)", half.describe(10*time.Minute))
}

func TestFlapWindow(t *testing.T) {
	require.Equal(t, 10*time.Minute, flapWindow(15*time.Second))
	require.Equal(t, 20*time.Minute, flapWindow(time.Minute))
}

// TestScrapeHealthNote: the lookups' answers make the warning (every
// lookup here answers 3: up changed 3 times, a 3s scrape of a 3s timeout);
// a failed lookup or no answer says nothing.
func TestScrapeHealthNote(t *testing.T) {
	s := models.Settings{ScrapeInterval: 15 * time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:"}
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	require.Contains(t, scrapeHealthNote(context.Background(), spacingProm{v: 3}, s, now),
		"the scrapes of 1 vLLM server fail now and then or come near the scrape timeout:  (up changed 3 times in the last 10m; a scrape took 3s, 100% of the 3s timeout)")
	require.Empty(t, scrapeHealthNote(context.Background(), spacingProm{v: 3, err: errors.New("boom")}, s, now))
	require.Empty(t, scrapeHealthNote(context.Background(), spacingProm{empty: true}, s, now))
}
