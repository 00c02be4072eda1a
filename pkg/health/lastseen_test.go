package health_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// lookbackFleet is a Prometheus whose engines reported in the last hour
// at the given times (Unix seconds); only those in now report at present.
type lookbackFleet struct {
	lastSeen map[string]float64 // instance -> last sample time
	now      []string           // instances reporting now
	asked    *[]string          // receives every expression, when set
}

func (lookbackFleet) Host() string { return "prom:9090" }

func (lookbackFleet) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (lookbackFleet) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
}

func (f lookbackFleet) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	if f.asked != nil {
		*f.asked = append(*f.asked, expr)
	}
	engine := func(inst string, v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), "engine": "0", "model_name": "m"}, Value: model.SampleValue(v)}
	}
	var v model.Vector
	switch {
	case strings.Contains(expr, "__name__=~"): // the stack lookup
	case strings.Contains(expr, "engine_sleep_state"), isScrapeHealth(expr): // the stall check: none stalled or asleep
	case strings.Contains(expr, "count_over_time((timestamp("): // the scrape spacing: not measured
	case strings.Contains(expr, "max_over_time(timestamp("): // the lookback
		for inst, ts := range f.lastSeen {
			v = append(v, engine(inst, ts))
		}
	default: // the fleet now
		for _, inst := range f.now {
			v = append(v, engine(inst, 1))
		}
	}
	return v, nil, nil
}

// TestLastSeenIsTheNewestMissingEngine: when engines are gone, "last
// seen" is when the last of them reported (the fleet was alive until
// then), not the first; engines still reporting do not count.
func TestLastSeenIsTheNewestMissingEngine(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) float64 { return float64(now.Add(-ago).Unix()) }
	tests := []struct {
		name     string
		fleet    lookbackFleet
		status   backend.HealthStatus
		missing  int
		lastSeen time.Time
		message  string
	}{
		{name: "whole fleet gone", status: backend.HealthStatusError, missing: 3, lastSeen: now.Add(-2 * time.Minute),
			message: "none now: last seen 2m0s ago (2026-11-30 11:58:00 UTC)",
			fleet:   lookbackFleet{lastSeen: map[string]float64{"a:1": at(40 * time.Minute), "b:1": at(2 * time.Minute), "c:1": at(15 * time.Minute)}}},
		{name: "part of the fleet gone", status: backend.HealthStatusOk, missing: 2, lastSeen: now.Add(-5 * time.Minute),
			message: "2 of the 3 engines seen in the last hour are missing now (last seen 5m0s ago (2026-11-30 11:55:00 UTC))",
			fleet:   lookbackFleet{now: []string{"a:1"}, lastSeen: map[string]float64{"a:1": at(0), "b:1": at(30 * time.Minute), "c:1": at(5 * time.Minute)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := health.Check(context.Background(), tt.fleet, models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}, now)
			require.Equal(t, tt.status, res.Status, res.Message)
			require.Contains(t, res.Message, tt.message)
			var d struct {
				Missing  int    `json:"missingEngines"`
				LastSeen string `json:"lastSeen"`
			}
			require.NoError(t, json.Unmarshal(res.JSONDetails, &d))
			require.Equal(t, tt.missing, d.Missing)
			require.Equal(t, tt.lastSeen.Format(time.RFC3339), d.LastSeen)
		})
	}
}

// TestLastSeenWording: how long ago is said in seconds under a minute and
// in whole minutes from a minute on; a fleet gone with no sample time in
// the lookback says so rather than inventing one.
func TestLastSeenWording(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ago  time.Duration
		none bool
		want string
	}{
		{name: "seconds", ago: 40 * time.Second, want: "last seen 40s ago (2026-11-30 11:59:20 UTC)"},
		{name: "just under a minute rounds to it", ago: 59*time.Second + 600*time.Millisecond, want: "last seen 1m0s ago (2026-11-30 11:59:00 UTC)"},
		{name: "exactly a minute", ago: time.Minute, want: "last seen 1m0s ago (2026-11-30 11:59:00 UTC)"},
		{name: "minutes round to the nearest", ago: 2*time.Minute + 40*time.Second, want: "last seen 3m0s ago (2026-11-30 11:57:20 UTC)"},
		{name: "no sample time", none: true, want: "last seen at an unknown time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := lookbackFleet{lastSeen: map[string]float64{"a:1": float64(now.Add(-tt.ago).UnixMilli()) / 1000}}
			if tt.none {
				f.lastSeen = nil
			}
			res := health.Check(context.Background(), f, models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}, now)
			require.Equal(t, backend.HealthStatusError, res.Status, res.Message)
			require.Contains(t, res.Message, "has none now: "+tt.want+". Check:")
		})
	}
}

// TestLookbackWalksTheHourAtTheScrapeInterval: the lookback subquery spans
// the hour before the check at the scrape interval, never finer than a
// second.
func TestLookbackWalksTheHourAtTheScrapeInterval(t *testing.T) {
	tests := []struct {
		scrape time.Duration
		want   string
	}{
		{scrape: 15 * time.Second, want: "[3600s:15s]"},
		{scrape: time.Second, want: "[3600s:1s]"},
		{scrape: 500 * time.Millisecond, want: "[3600s:1s]"},
		{scrape: 0, want: "[3600s:1s]"},
	}
	for _, tt := range tests {
		t.Run(tt.scrape.String(), func(t *testing.T) {
			var asked []string
			f := lookbackFleet{now: []string{"a:1"}, lastSeen: map[string]float64{"a:1": 1}, asked: &asked}
			s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:", ScrapeInterval: tt.scrape}
			res := health.Check(context.Background(), f, s, time.Now())
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			var lookback []string
			for _, e := range asked {
				if strings.HasPrefix(e, "max by") && strings.Contains(e, "max_over_time(timestamp(") {
					lookback = append(lookback, e)
				}
			}
			require.Len(t, lookback, 1, asked)
			require.Contains(t, lookback[0], ")"+tt.want+"))")
		})
	}
}
