package plugin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
)

// TestHostForwardsOAuthIdentity runs the real plugin binary over gRPC: the
// Authorization header Grafana puts on a query reaches Prometheus when the
// data source forwards the OAuth identity, and never appears in the
// plugin's log output (at debug level) or its answers, including when a
// proxy quotes it back in an error page.
func TestHostForwardsOAuthIdentity(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("canary%d", time.Now().UnixNano())
	logs := &syncBuffer{}
	host := grafanahost.LaunchWith(t, grafanahost.Build(t), grafanahost.LaunchOptions{
		Log: logs, Env: []string{"GF_PLUGIN_LOG_LEVEL=debug"}})
	p := newIdentityProm(t, 0)
	echo := echoHeaders(t, http.StatusBadGateway, "text/html")
	headers := map[string]string{"Authorization": "Bearer tok-" + canary, "X-Id-Token": "id-" + canary}
	ds := func(uid, url string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{UID: uid, URL: url,
			JSONData: json.RawMessage(`{"scrapeInterval":"15s","queryTimeout":"2s","oauthPassThru":true}`)}
	}
	now := time.Now()

	resp := host.QueryData(t, ds("fwd", p.URL), headers, upQuery(now.Add(-time.Hour), now))
	require.Equal(t, canary, whoAnswered(t, resp), "Prometheus answered the forwarded identity")
	reqs := p.requests()
	require.NotEmpty(t, reqs)
	for i, h := range reqs {
		require.Equal(t, "Bearer tok-"+canary, h.Get("Authorization"), "request %d", i)
		require.Equal(t, "id-"+canary, h.Get("X-Id-Token"), "request %d", i)
	}

	resp = host.QueryData(t, ds("fwd-echo", echo), headers, upQuery(now.Add(-time.Hour), now))
	r := resp.Responses["A"]
	require.Error(t, r.Error)
	require.NotContains(t, r.Error.Error(), canary)
	require.Contains(t, r.Error.Error(), "[redacted]", "the proxy did quote the token")

	require.NotEmpty(t, logs.String(), "the host captures the plugin's log output")
	require.NotContains(t, logs.String(), canary, "the plugin's log output")
}
