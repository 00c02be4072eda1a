package query_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// Helpers shared by the unit tier (replayed and faked Prometheus) and the
// integration tier (integration_test.go, real Prometheus).

// executor builds the production executor against a real Prometheus.
func executor(t *testing.T, url string) *query.Executor {
	t.Helper()
	return settingsExecutor(t, url, `{"scrapeInterval":"1s"}`)
}

// settingsExecutor is executor with the given jsonData.
func settingsExecutor(t *testing.T, url, jsonData string) *query.Executor {
	t.Helper()
	s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(jsonData)})
	require.NoError(t, err)
	c, err := prom.New(prom.Options{URL: s.URL, Timeout: s.QueryTimeout})
	require.NoError(t, err)
	return &query.Executor{Prom: c, Settings: s, Detector: query.NewDetector(c, s.MetricPrefix, time.Now)}
}

func dq(ref, js string, from, to time.Time) backend.DataQuery {
	return backend.DataQuery{RefID: ref, JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 1000,
		TimeRange: backend.TimeRange{From: from, To: to}}
}

func run(t *testing.T, e *query.Executor, qs ...backend.DataQuery) *backend.QueryDataResponse {
	t.Helper()
	return e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: qs})
}

// valueFrames returns frames by display name.
func byName(frames data.Frames) map[string]*data.Frame {
	out := map[string]*data.Frame{}
	for _, f := range frames {
		out[f.Name] = f
	}
	return out
}

// noticeTexts joins every notice of the frames, one per line.
func noticeTexts(frames data.Frames) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Meta == nil {
			continue
		}
		for _, n := range f.Meta.Notices {
			b.WriteString(n.Text + "\n")
		}
	}
	return b.String()
}
