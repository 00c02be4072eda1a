package health_test

import (
	"context"
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
