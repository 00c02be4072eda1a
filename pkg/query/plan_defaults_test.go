package query

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestRulesScrape: an unset scrape interval is pkg/interval's default for
// the rules' fit; a set one is used as it is.
func TestRulesScrape(t *testing.T) {
	require.Equal(t, interval.DefaultScrape, resolveSettings(models.Settings{}).rulesScrape)
	require.Equal(t, 7*time.Second, resolveSettings(models.Settings{ScrapeInterval: 7 * time.Second}).rulesScrape)
}

// TestUsableWithoutNames: a rule plan that names no recorded series is not
// usable (and nothing is probed for it).
func TestUsableWithoutNames(t *testing.T) {
	require.False(t, (&plan{}).usable(context.Background(), ruleUse{}, vllm.RulePlan{}))
}

// TestStallWindowDefault: without a stall window setting the window is the
// default, or two scrape intervals where that is longer.
func TestStallWindowDefault(t *testing.T) {
	tests := []struct {
		name           string
		scrape, window time.Duration
		want           time.Duration
	}{
		{"set", 15 * time.Second, 10 * time.Minute, 10 * time.Minute},
		{"default", 15 * time.Second, 0, models.DefaultStallWindow},
		{"two slow scrapes", 5 * time.Minute, 0, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plan{settings: resolveSettings(models.Settings{ScrapeInterval: tt.scrape, StallWindow: tt.window})}
			require.Equal(t, tt.want, p.settings.stallWindow)
		})
	}
}

// TestGenerationByLabels: without marker names an engine-labelled series
// is V1, and one without the label is unknown.
func TestGenerationByLabels(t *testing.T) {
	require.Equal(t, string(vllm.GenV1), generationByLabels(engineKey{instance: "a", engine: "0"}))
	require.Equal(t, "unknown", generationByLabels(engineKey{instance: "a"}))
}

// TestFleetFailedShareWithoutRequests: an engine that served no requests
// has no failed share (not 0/0), whatever its failure rate reads.
func TestFleetFailedShareWithoutRequests(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	one := func(v float64) model.Vector {
		return model.Vector{{Metric: model.Metric{"instance": "a"}, Value: model.SampleValue(v)}}
	}
	tests := []struct {
		name     string
		requests float64
		want     *float64
	}{
		{"no requests", 0, nil},
		{"two per second", 2, mut1Ptr(0.25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plan{settings: resolveSettings(models.Settings{ScrapeInterval: 15 * time.Second}),
				builder: vllm.Builder{InstanceLabel: "instance"}, timeRange: interval.Result{End: now}}
			rows, _ := p.fleetRows(map[string]model.Vector{vllm.FleetSeen: one(1), vllm.FleetRequests: one(tt.requests), vllm.FleetFailed: one(0.5 * min(tt.requests, 1))})
			require.Len(t, rows, 1)
			require.Equal(t, tt.want, rows[0].FailedShare)
		})
	}
}

func mut1Ptr(v float64) *float64 { return &v }

// TestResolvedSaturationThresholds: settings built in code (no thresholds)
// get the defaults; loaded ones are kept as they are.
func TestResolvedSaturationThresholds(t *testing.T) {
	require.Equal(t, models.DefaultSaturation(), resolveSettings(models.Settings{}).saturation)
	th := models.DefaultSaturation()
	th.KVHigh = 0.5
	require.Equal(t, th, resolveSettings(models.Settings{Saturation: th}).saturation)
}
