//go:build !mutation

package health_test

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestCheckWarnsOnAWrongScrapeInterval (issue 36, error 4): on every single
// server back end scraping a fleet every 2s, Save & test measures 2s from
// the samples' timestamps. A setting within 1.5x of it says nothing; one far
// off either way is a warning (health still OK) naming both values and
// what to set.
func TestCheckWarnsOnAWrongScrapeInterval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		setting string
		want    string // "" for no warning
	}{
		{"2s", ""},
		{"2500ms", ""},
		{"500ms", "Warning: the scrape interval setting is 500ms, but the vLLM series' samples are 2s apart (measured over the last 5m): rate windows ($__rate_interval) hold fewer than two samples and rate panels come out empty; set scrapeInterval to 2s"},
		{"1m", "Warning: the scrape interval setting is 1m, but the vLLM series' samples are 2s apart (measured over the last 10m): steps and rate windows are wider than they need to be; set scrapeInterval to 2s"},
	}
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := promtest.Start(t, promtest.Options{Backend: k, ScrapeInterval: 2 * time.Second, Targets: []string{
				promtest.ServeFile(t, "testdata/v1.prom"), promtest.ServeFile(t, "testdata/v1-qwen.prom")}})
			// Four samples per engine: the measurement needs three.
			srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 4`, 2, 60*time.Second)
			for _, tt := range tests {
				res := check(t, srv.URL, `{"scrapeInterval":"`+tt.setting+`"}`)
				require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
				if tt.want == "" {
					require.NotContains(t, res.Message, "scrape interval", tt.setting)
					continue
				}
				require.Contains(t, res.Message, tt.want, tt.setting)
			}
		})
	}
}
