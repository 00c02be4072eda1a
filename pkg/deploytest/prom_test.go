package deploytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// promServer is a real Prometheus (pkg/internal/promtest) running one of
// the configs under deploy/prometheus.
type promServer struct {
	*promtest.Server
}

func startPrometheus(t *testing.T, config string) promServer {
	t.Helper()
	return promServer{promtest.Start(t, promtest.Options{ConfigFile: config})}
}

// get decodes the "data" of a Prometheus API answer into v.
func (p promServer) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(p.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body), "GET %s", path)
	require.Equal(t, "success", body.Status, "GET %s: %s", path, body.Error)
	require.NoError(t, json.Unmarshal(body.Data, v), "GET %s", path)
}

// eventually polls check every 200ms until it returns "" or the timeout
// passes, then fails with check's last complaint.
func eventually(t *testing.T, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type activeTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

// targets returns the active targets of a job.
func (p promServer) targets(t *testing.T, job string) []activeTarget {
	t.Helper()
	var data struct {
		ActiveTargets []activeTarget `json:"activeTargets"`
	}
	p.get(t, "/api/v1/targets?state=active", &data)
	var out []activeTarget
	for _, tg := range data.ActiveTargets {
		if tg.Labels["job"] == job {
			out = append(out, tg)
		}
	}
	return out
}

// waitForTargets waits until the job has n active targets and returns
// their instance labels and scrape URLs.
func (p promServer) waitForTargets(t *testing.T, job string, n int) map[string]string {
	t.Helper()
	var got map[string]string
	eventually(t, 30*time.Second, func() string {
		got = map[string]string{}
		for _, tg := range p.targets(t, job) {
			got[tg.Labels["instance"]] = tg.ScrapeURL
		}
		if len(got) != n {
			return fmt.Sprintf("job %s: want %d targets, have %d: %v", job, n, len(got), got)
		}
		return ""
	})
	return got
}
