//go:build !mutation

package health_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// exporter serves a fixture until stop is called, like a vLLM server that
// goes down.
func exporter(t *testing.T, fixture string) (addr string, stop func()) {
	t.Helper()
	body, err := os.ReadFile(fixture)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", promtest.ContentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}

// TestCheckFleetGone: vLLM series in the last hour but none now is not OK,
// and a fleet that is partly down says how many engines are missing.
func TestCheckFleetGone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		stop     []bool // per fixture: stop its exporter
		wantOK   bool
		wantMsgs []string
	}{
		{
			name: "whole fleet down", stop: []bool{true, true},
			wantMsgs: []string{"none now", "last seen", "ago", "targets are down", "--disable-log-stats", "3 engines on 2 instances"},
		},
		{
			name: "part of the fleet down", stop: []bool{false, true}, wantOK: true,
			wantMsgs: []string{"1 engine on 1 instance serving 1 model", "2 of the 3 engines seen in the last hour are missing now", "last seen"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fixtures := []string{"testdata/v1.prom", "testdata/v1-dp2.prom"}
			targets := make([]string, len(fixtures))
			stops := make([]func(), len(fixtures))
			for i, f := range fixtures {
				targets[i], stops[i] = exporter(t, f)
			}
			srv := promtest.Start(t, promtest.Options{Targets: targets})
			srv.WaitForSeries(t, `count_over_time(up[1m]) >= 2`, len(targets), 30*time.Second)
			res := check(t, srv.URL, `{"scrapeInterval":"1s"}`)
			require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)

			down := 0
			for i, stop := range tt.stop {
				if stop {
					stops[i]()
					down++
				}
			}
			srv.WaitForSeries(t, `up == 0`, down, 30*time.Second)

			res = check(t, srv.URL, `{"scrapeInterval":"1s"}`)
			for _, m := range tt.wantMsgs {
				require.Contains(t, res.Message, m)
			}
			var det map[string]any
			require.NoError(t, json.Unmarshal(res.JSONDetails, &det), res.Message)
			require.NotEmpty(t, det["lastSeen"])
			if tt.wantOK {
				require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
				require.EqualValues(t, 2, det["missingEngines"])
				return
			}
			require.Equal(t, backend.HealthStatusError, res.Status, res.Message)
			require.EqualValues(t, 3, det["missingEngines"])
		})
	}
}
