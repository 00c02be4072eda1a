//go:build !mutation

package health_test

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestCheckAcrossBackends runs Save & test against every single-server back
// end scraping the same exporters, with and without a selector.
func TestCheckAcrossBackends(t *testing.T) {
	t.Parallel()
	names := map[promtest.Kind]string{
		promtest.Prometheus2: "Prometheus 2.",
		promtest.Prometheus3: "Prometheus " + promtest.Prometheus3Version,
		// VictoriaMetrics 1.79 has no buildinfo endpoint.
		promtest.VictoriaMetrics: "Prometheus-compatible server at ",
	}
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := promtest.Start(t, promtest.Options{Backend: k, Groups: []promtest.Group{
				{Targets: []string{promtest.ServeFile(t, "testdata/v1.prom"), promtest.ServeFile(t, "testdata/v1-dp2.prom")}, Labels: map[string]string{"cluster": "a"}},
				{Targets: []string{promtest.ServeFile(t, "testdata/v1-qwen.prom")}, Labels: map[string]string{"cluster": "b"}},
			}})
			srv.WaitForSeries(t, `count_over_time(up[1m]) >= 2`, 3, 60*time.Second)

			res := check(t, srv.URL, `{"scrapeInterval":"1s"}`)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, names[k])
			require.Contains(t, res.Message, "vLLM V1 metrics found: 4 engines on 3 instances serving 2 models")

			res = check(t, srv.URL, `{"scrapeInterval":"1s","selector":"cluster=\"a\""}`)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
			require.Contains(t, res.Message, `3 engines on 2 instances serving 1 model (only series matching the data source selector {cluster="a"} are counted)`)
		})
	}
}
