//go:build !mutation

// The integration tier: the real Prometheus. scripts/mutation.sh sets the
// mutation tag so each mutant runs only the unit tier.

package health_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestCheckAgainstRealPrometheus runs the real Prometheus scraping fixture
// exporters and checks what detection and the health check report.
func TestCheckAgainstRealPrometheus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fixtures []string
		wantOK   bool
		wantMsg  string
		wantGen  string
	}{
		{
			name:     "V1 fleet: single engine, data-parallel pair, second model",
			fixtures: []string{"v1.prom", "v1-dp2.prom", "v1-qwen.prom"},
			wantOK:   true, wantGen: "V1",
			wantMsg: "vLLM V1 metrics found: 4 engines on 3 instances serving 2 models",
		},
		{
			name:     "V0 fleet",
			fixtures: []string{"v0.prom", "v0.prom"},
			wantOK:   true, wantGen: "V0",
			wantMsg: "vLLM V0 metrics found: 2 engines on 2 instances serving 1 model",
		},
		{
			name:     "mixed fleet",
			fixtures: []string{"v1.prom", "v0.prom"},
			wantOK:   true, wantGen: "mixed",
			wantMsg: "vLLM mixed metrics found: 2 engines on 2 instances serving 1 model",
		},
		{
			name:     "no vLLM series",
			fixtures: []string{"novllm.prom"},
			wantMsg:  "is reachable but has no vLLM series",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Prometheus spends ~5s before its first scrape; run the fleets side by side.
			t.Parallel()
			targets := make([]string, len(tt.fixtures))
			for i, f := range tt.fixtures {
				targets[i] = promtest.ServeFile(t, "testdata/"+f)
			}
			srv := promtest.Start(t, promtest.Options{Targets: targets})
			srv.WaitForSeries(t, `up == 1`, len(targets), 30*time.Second)
			// One more scrape round so every target's samples are in the head block.
			srv.WaitForSeries(t, `count_over_time(up[1m]) >= 2`, len(targets), 30*time.Second)

			res := check(t, srv.URL, `{"scrapeInterval":"1s"}`)
			require.Contains(t, res.Message, tt.wantMsg)
			if !tt.wantOK {
				require.Equal(t, backend.HealthStatusError, res.Status)
				require.Contains(t, res.Message, "--disable-log-stats")
				require.Contains(t, res.Message, "metric prefix")
				return
			}
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, "Prometheus 2.")
			var det map[string]any
			require.NoError(t, json.Unmarshal(res.JSONDetails, &det))
			require.Equal(t, tt.wantGen, det["generation"])
		})
	}
}

// TestCheckPrefix shows that a prefix setting that does not match the fleet
// reports no vLLM series instead of a false OK.
func TestCheckPrefix(t *testing.T) {
	t.Parallel()
	srv := promtest.Start(t, promtest.Options{Targets: []string{promtest.ServeFile(t, "testdata/v1.prom")}})
	srv.WaitForSeries(t, `vllm:num_requests_running`, 1, 30*time.Second)
	res := check(t, srv.URL, `{"metricPrefix":"ray_vllm:"}`)
	require.Equal(t, backend.HealthStatusError, res.Status)
	require.Contains(t, res.Message, `no metric name starts with "ray_vllm:"`)
}
