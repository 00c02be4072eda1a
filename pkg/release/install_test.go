package release_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/release"
)

// TestInstallFromArchive installs the release archive the way docs/install.md's
// unzip path does (into an empty plugins folder), then starts this platform's
// binary from there exactly as Grafana finds it (plugin.json's executable +
// _<os>_<arch>) over go-plugin, and calls it over gRPC against a real
// Prometheus: Save & test, and a query.
func TestInstallFromArchive(t *testing.T) {
	a := readBuilt(t)
	plugins := t.TempDir()
	require.NoError(t, a.Extract(plugins))
	entries, err := os.ReadDir(plugins)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the archive unpacks into one folder")
	dir := filepath.Join(plugins, entries[0].Name())
	require.Equal(t, "inferops-vllm-datasource", entries[0].Name())

	exe := filepath.Join(dir, release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}.Executable("gpx_vllm"))
	info, err := os.Stat(exe)
	require.NoError(t, err, "no binary for this platform in the archive")
	require.Equal(t, os.FileMode(0o755), info.Mode().Perm())

	host := grafanahost.Launch(t, dir)
	require.Equal(t, "inferops-vllm-datasource", host.Plugin.ID)

	srv := promtest.Start(t, promtest.Options{Targets: []string{promtest.ServeFile(t, "../health/testdata/v1.prom")}})
	srv.WaitForSeries(t, `vllm:num_requests_running`, 1, 30*time.Second)
	ds := backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}

	health := host.CheckHealth(t, ds)
	require.Equal(t, backend.HealthStatusOk, health.Status, health.Message)
	require.Contains(t, health.Message, "vLLM V1 metrics found")

	now := time.Now()
	resp := host.QueryData(t, ds, nil, backend.DataQuery{RefID: "A", QueryType: "queue",
		JSON: json.RawMessage(`{"queryType":"queue","grouping":"instance"}`), Interval: time.Second, MaxDataPoints: 100,
		TimeRange: backend.TimeRange{From: now.Add(-5 * time.Minute), To: now}})
	require.NoError(t, resp.Responses["A"].Error)
	require.NotEmpty(t, resp.Responses["A"].Frames, "the queue query over the installed binary returns series")
}
