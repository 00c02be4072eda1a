package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// check runs Save & test against the Prometheus at url, as the plugin does.
func check(t *testing.T, url, jsonData string) *backend.CheckHealthResult {
	t.Helper()
	ctx := context.Background()
	s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(jsonData)})
	require.NoError(t, err)
	c, err := prom.New(prom.Options{URL: s.URL, Timeout: s.QueryTimeout})
	require.NoError(t, err)
	return health.Check(ctx, c, s, time.Now())
}

// isScrapeHealth: the scrape-health lookups (vllm.HealthScrapeSignals),
// which the fakes that answer every query alike answer empty, as a store
// without Prometheus' scrape series would (scrapehealth_test.go pins them).
func isScrapeHealth(expr string) bool {
	return strings.Contains(expr, "changes(up") || strings.Contains(expr, "scrape_duration_seconds") ||
		strings.Contains(expr, "scrape_timeout_seconds")
}
