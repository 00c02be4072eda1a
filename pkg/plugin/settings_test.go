package plugin

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestHTTPOptions: Grafana's standard HTTP settings (basic auth, custom
// headers from secureJsonData) reach the Prometheus client's options, an
// instance without jsonData still parses, and jsonData the SDK cannot read
// is an invalid-settings error (models.ParseSettings rejects it first in
// NewDatasource).
func TestHTTPOptions(t *testing.T) {
	t.Run("auth and headers", func(t *testing.T) {
		o, err := httpOptions(t.Context(), backend.DataSourceInstanceSettings{
			URL: "http://p", BasicAuthEnabled: true, BasicAuthUser: "u",
			JSONData:                []byte(`{"httpHeaderName1":"Authorization"}`),
			DecryptedSecureJSONData: map[string]string{"basicAuthPassword": "pw", "httpHeaderValue1": "Bearer tok"},
		})
		require.NoError(t, err)
		require.NotNil(t, o.BasicAuth)
		require.Equal(t, "u", o.BasicAuth.User)
		require.Equal(t, "pw", o.BasicAuth.Password)
		require.Equal(t, "Bearer tok", o.Header.Get("Authorization"))
	})
	t.Run("no jsonData", func(t *testing.T) {
		_, err := httpOptions(t.Context(), backend.DataSourceInstanceSettings{URL: "http://p"})
		require.NoError(t, err)
	})
	t.Run("unreadable jsonData", func(t *testing.T) {
		_, err := httpOptions(t.Context(), backend.DataSourceInstanceSettings{URL: "https://p", JSONData: []byte(`{"timeout":`)})
		require.ErrorIs(t, err, models.ErrInvalidSettings)
		require.ErrorContains(t, err, "HTTP settings")
	})
}
