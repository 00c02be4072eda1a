package models

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		json    string
		want    Settings
		wantErr string
	}{
		{name: "defaults", url: "http://prom:9090", json: `{}`,
			want: Settings{URL: "http://prom:9090", ScrapeInterval: 15 * time.Second, QueryTimeout: 30 * time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:", MaxConcurrentQueries: 10}},
		{name: "empty jsonData", url: "https://prom", json: ``,
			want: Settings{URL: "https://prom", ScrapeInterval: 15 * time.Second, QueryTimeout: 30 * time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:"}},
		{name: "all fields", url: "http://prom:9090", json: `{"scrapeInterval":"30s","queryTimeout":"1m","instanceLabel":"pod","metricPrefix":"ray_vllm:","maxConcurrentQueries":4,"extra":true}`,
			want: Settings{URL: "http://prom:9090", ScrapeInterval: 30 * time.Second, QueryTimeout: time.Minute, InstanceLabel: "pod", MetricPrefix: "ray_vllm:", MaxConcurrentQueries: 4}},
		{name: "quoted concurrency from provisioning", url: "http://p", json: `{"maxConcurrentQueries":"16"}`,
			want: Settings{URL: "http://p", ScrapeInterval: 15 * time.Second, QueryTimeout: 30 * time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:", MaxConcurrentQueries: 16}},
		{name: "concurrency zero", url: "http://p", json: `{"maxConcurrentQueries":0}`, wantErr: `maxConcurrentQueries "0" is out of range; allowed: whole numbers 1 to 100`},
		{name: "concurrency too high", url: "http://p", json: `{"maxConcurrentQueries":101}`, wantErr: `maxConcurrentQueries "101" is out of range`},
		{name: "concurrency fraction", url: "http://p", json: `{"maxConcurrentQueries":2.5}`, wantErr: `maxConcurrentQueries "2.5" is out of range`},
		{name: "url from jsonData", json: `{"prometheusUrl":"http://p:9090"}`,
			want: Settings{URL: "http://p:9090", ScrapeInterval: 15 * time.Second, QueryTimeout: 30 * time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:"}},
		{name: "missing url", json: `{}`, wantErr: "url is empty"},
		{name: "not http", url: "ftp://x", wantErr: `url "ftp://x" is not an http(s) URL`},
		{name: "credentials in url", url: "http://user:secret@prom", wantErr: "must not contain credentials"},
		{name: "bad scrape interval", url: "http://p", json: `{"scrapeInterval":"soon"}`, wantErr: `scrapeInterval "soon" is not a positive duration`},
		{name: "negative timeout", url: "http://p", json: `{"queryTimeout":"-5s"}`, wantErr: `queryTimeout "-5s"`},
		{name: "bad instance label", url: "http://p", json: `{"instanceLabel":"pod-name"}`, wantErr: `instanceLabel "pod-name" is not a Prometheus label name`},
		{name: "bad prefix", url: "http://p", json: `{"metricPrefix":"vllm{"}`, wantErr: `metricPrefix "vllm{"`},
		{name: "bad json", url: "http://p", json: `{`, wantErr: "jsonData is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSettings(Instance{URL: tt.url, JSONData: []byte(tt.json)})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, errors.Is(err, ErrInvalidSettings))
				require.NotContains(t, err.Error(), "secret")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want.URL, got.URL)
			require.Equal(t, tt.want.ScrapeInterval, got.ScrapeInterval)
			require.Equal(t, tt.want.QueryTimeout, got.QueryTimeout)
			require.Equal(t, tt.want.InstanceLabel, got.InstanceLabel)
			require.Equal(t, tt.want.MetricPrefix, got.MetricPrefix)
			if tt.want.MaxConcurrentQueries != 0 {
				require.Equal(t, tt.want.MaxConcurrentQueries, got.MaxConcurrentQueries)
			} else {
				require.Equal(t, DefaultMaxConcurrentQueries, got.MaxConcurrentQueries)
			}
		})
	}
}

func TestParseSettingsIncremental(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		on      bool
		overlap time.Duration
		wantErr string
	}{
		{name: "on by default, Grafana's overlap", json: `{}`, on: true, overlap: 10 * time.Minute},
		{name: "turned off", json: `{"incrementalQuerying":false}`, on: false, overlap: 10 * time.Minute},
		{name: "own overlap", json: `{"incrementalQuerying":true,"incrementalQueryOverlapWindow":"2m"}`, on: true, overlap: 2 * time.Minute},
		{name: "overlap of two scrapes", json: `{"scrapeInterval":"30s","incrementalQueryOverlapWindow":"1m"}`, on: true, overlap: time.Minute},
		{name: "overlap shorter than two scrapes", json: `{"scrapeInterval":"30s","incrementalQueryOverlapWindow":"59s"}`,
			wantErr: `incrementalQueryOverlapWindow "59s" is shorter than two scrape intervals (1m0s)`},
		{name: "overlap not a duration", json: `{"incrementalQueryOverlapWindow":"later"}`, wantErr: `incrementalQueryOverlapWindow "later" is not a positive duration`},
		{name: "switch not a boolean", json: `{"incrementalQuerying":"yes"}`, wantErr: "jsonData is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSettings(Instance{URL: "http://p", JSONData: []byte(tt.json)})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorIs(t, err, ErrInvalidSettings)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.on, got.Incremental)
			require.Equal(t, tt.overlap, got.IncrementalOverlap)
		})
	}
}

// TestAssumedScrapeTimeout: Prometheus' default 10s, capped by a shorter
// interval; an unset interval keeps the default.
func TestAssumedScrapeTimeout(t *testing.T) {
	tests := []struct{ interval, want time.Duration }{
		{time.Minute, 10 * time.Second},
		{15 * time.Second, 10 * time.Second},
		{10 * time.Second, 10 * time.Second},
		{5 * time.Second, 5 * time.Second},
		{time.Second, time.Second},
		{0, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.interval.String(), func(t *testing.T) {
			require.Equal(t, tt.want, AssumedScrapeTimeout(tt.interval))
		})
	}
}
