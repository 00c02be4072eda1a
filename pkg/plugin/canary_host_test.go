package plugin_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// syncBuffer is a log sink safe for the host's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// echoHeaders answers every request with status and a body that repeats
// the request's headers: a proxy or server that quotes what it was sent.
func echoHeaders(t *testing.T, status int, contentType string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		var b strings.Builder
		for k, v := range r.Header {
			fmt.Fprintf(&b, "%s: %s; ", k, strings.Join(v, ","))
		}
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSecretCanary plants one canary in every secureJsonData key, runs every
// query type, health and every resource route, healthy and on the error
// paths (Prometheus down, 401, 5xx, agents down or echoing), and fails if the
// canary (or the base64 basic-auth form of it) shows up in any frame,
// notice, error, resource body or header, or the plugin's log output.
func TestSecretCanary(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("canary-%d-s3cr3t", time.Now().UnixNano())
	forms := []string{canary, base64.StdEncoding.EncodeToString([]byte("vllm-user:" + canary))}
	logs := &syncBuffer{}
	host := grafanahost.LaunchWith(t, grafanahost.Build(t), grafanahost.LaunchOptions{
		Log: logs, Env: []string{"GF_PLUGIN_LOG_LEVEL=debug"}})

	srv := promtest.Start(t, promtest.Options{Targets: []string{promtest.ServeFile(t, "../health/testdata/v1.prom")}})
	srv.WaitForSeries(t, `vllm:num_requests_running`, 1, 30*time.Second)

	secure := map[string]string{"basicAuthPassword": canary, "httpHeaderValue1": canary, "agentToken": canary}
	ds := func(uid, url, agents string, extra string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{UID: uid, URL: url, BasicAuthEnabled: true, BasicAuthUser: "vllm-user",
			JSONData: json.RawMessage(`{"scrapeInterval":"1s","queryTimeout":"2s","agentTimeout":"500ms","httpHeaderName1":"X-Scope-OrgID",` +
				`"agentUrls":[` + agents + `]` + extra + `}`),
			DecryptedSecureJSONData: secure}
	}
	agentEcho401 := `"` + echoHeaders(t, http.StatusUnauthorized, "text/plain") + `"`
	agentEcho500 := `"` + echoHeaders(t, http.StatusInternalServerError, "text/plain") + `"`
	agentDown := `"` + promtest.ClosedURL(t) + `"`
	agents := agentEcho401 + "," + agentEcho500 + "," + agentDown
	tlsKey := map[string]string{"tlsClientCert": "-----BEGIN CERTIFICATE-----\n" + canary + "\n-----END CERTIFICATE-----",
		"tlsClientKey": "-----BEGIN PRIVATE KEY-----\n" + canary + "\n-----END PRIVATE KEY-----"}

	sources := []backend.DataSourceInstanceSettings{
		ds("healthy", srv.URL, agents, ""),
		ds("prom-down", promtest.ClosedURL(t), agentDown, ""),
		ds("prom-401-echo", echoHeaders(t, http.StatusUnauthorized, "text/plain"), agents, ""),
		ds("prom-502-echo", echoHeaders(t, http.StatusBadGateway, "text/html"), agents, ""),
		ds("prom-500-json-echo", echoHeaders(t, http.StatusInternalServerError, "application/json"), agents, ""),
		ds("agents-by-job", srv.URL, "", `,"agentJob":"vllm"`),
	}
	bad := ds("bad-tls", srv.URL, agents, `,"tlsAuth":true`)
	for k, v := range tlsKey {
		bad.DecryptedSecureJSONData = map[string]string{k: v}
		for kk, vv := range secure {
			bad.DecryptedSecureJSONData[kk] = vv
		}
	}
	bad.DecryptedSecureJSONData["tlsClientCert"], bad.DecryptedSecureJSONData["tlsClientKey"] = tlsKey["tlsClientCert"], tlsKey["tlsClientKey"]
	sources = append(sources, bad)

	queries := []string{
		`{"queryType":"queue"}`, `{"queryType":"waitTime","live":true}`, `{"queryType":"waitTime","family":"itl"}`,
		`{"queryType":"preemptions"}`, `{"queryType":"preemptions","asSeries":true}`, `{"queryType":"topk","k":2}`,
		`{"queryType":"topk","rankBy":"preemption_rate"}`, `{"queryType":"gpu"}`, `{"queryType":"gpu","format":"series"}`,
		`{"queryType":"gpu","source":"prometheus"}`, `{"queryType":"promql","expr":"up"}`, `{"queryType":"promql","expr":"sum(rate(x[5m]"}`,
		`{"queryType":"nope"}`, `{not json`,
	}
	routes := []string{"models", "instances", "engines?instance=x", "instances?model=m", "api/v1/query?query=up", "models?model=" + canary}

	check := func(t *testing.T, what, text string) {
		t.Helper()
		for _, f := range forms {
			require.NotContains(t, text, f, "%s leaks a secret", what)
		}
	}
	for _, s := range sources {
		t.Run(s.UID, func(t *testing.T) {
			res := host.CheckHealth(t, s)
			check(t, "health message", res.Message)
			check(t, "health details", string(res.JSONDetails))

			dqs := make([]backend.DataQuery, len(queries))
			for i, q := range queries {
				dqs[i] = query(fmt.Sprintf("Q%d", i), "", q)
			}
			resp := host.QueryData(t, s, nil, dqs...)
			require.Len(t, resp.Responses, len(queries))
			for ref, r := range resp.Responses {
				if r.Error != nil {
					check(t, ref+" error", r.Error.Error())
				}
				b, err := json.Marshal(r.Frames)
				require.NoError(t, err)
				check(t, ref+" frames", string(b))
			}
			for _, route := range routes {
				r := host.CallResource(t, s, "GET", route, nil)
				check(t, route+" body", string(r.Body))
				h, _ := json.Marshal(r.Headers)
				check(t, route+" headers", string(h))
			}
		})
	}
	t.Run("plugin log", func(t *testing.T) {
		require.NotEmpty(t, logs.String(), "the host captures the plugin's log output")
		check(t, "the plugin's log output", logs.String())
	})
}
