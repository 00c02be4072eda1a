package deploytest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startSimViaEntrypoint builds vllm-sim and starts it through
// deploy/docker/vllm-sim-entrypoint.sh with deploy/vllm-sim.flags, exactly
// as the compose service does, except that it listens on 127.0.0.1 with
// free ports. It returns once the targets file is written.
func startSimViaEntrypoint(t *testing.T, targetsFile string, env ...string) {
	t.Helper()
	bin := t.TempDir()
	out, ok := runTool(t, repoRoot(t), "go", "build", "-o", filepath.Join(bin, "vllm-sim"), "./cmd/vllm-sim")
	require.True(t, ok, "go build ./cmd/vllm-sim:\n%s", out)

	logPath := filepath.Join(t.TempDir(), "vllm-sim.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command("sh", repoPath(t, "deploy/docker/vllm-sim-entrypoint.sh"))
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"VLLM_SIM_FLAGS_FILE="+repoPath(t, "deploy/vllm-sim.flags"),
		"VLLM_SIM_TARGETS_FILE="+targetsFile,
		"VLLM_SIM_LISTEN=127.0.0.1",
		"VLLM_SIM_BASE_PORT=0",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the entrypoint execs vllm-sim: this is its pid
		<-exited
		_ = logFile.Close()
	})

	eventually(t, 60*time.Second, func() string {
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("vllm-sim-entrypoint exited early (%v):\n%s", waitErr, log)
		default:
		}
		// The file is replaced atomically once every instance listens.
		b, err := os.ReadFile(targetsFile)
		if err != nil || !json.Valid(b) {
			return "vllm-sim wrote no targets file " + targetsFile
		}
		return ""
	})
}

// TestSimEntrypoint: the compose entrypoint starts the fleet that
// deploy/vllm-sim.flags describes (one target per instance, grouped by
// prefill/decode role) and passes its own settings after the file's.
func TestSimEntrypoint(t *testing.T) {
	t.Parallel()
	_, flags := simFlags(t)
	instances, err := strconv.Atoi(flags["instances"])
	require.NoError(t, err)
	targets := filepath.Join(t.TempDir(), "vllm.json")
	writeFile(t, targets, "stale") // left by an earlier run: must be replaced
	startSimViaEntrypoint(t, targets)

	var groups []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	b, err := os.ReadFile(targets)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &groups), "targets file: %s", b)
	// With --roles the instances are grouped by role, each group labelled
	// with it (KServe's llm_isvc_role, as the plugin reads it).
	roles := map[string]bool{}
	for _, r := range strings.Split(flags["roles"], ",") {
		if r != "" {
			roles[r] = true
		}
	}
	var all []string
	for _, g := range groups {
		all = append(all, g.Targets...)
		if len(roles) > 0 {
			require.True(t, roles[g.Labels["llm_isvc_role"]], "group %v: a role of --roles %s", g.Labels, flags["roles"])
		}
	}
	require.Len(t, groups, max(1, len(roles)), "one group per role")
	require.Len(t, all, instances, "one target per --instances of deploy/vllm-sim.flags")
	for _, tg := range all {
		require.True(t, strings.HasPrefix(tg, "127.0.0.1:"), "VLLM_SIM_LISTEN must reach vllm-sim: %s", tg)
	}
}

// TestRulesOnSimulatedFleet runs the demo's Prometheus config
// (deploy/prometheus/prometheus.yml with rules/) against the fleet of
// deploy/vllm-sim.flags, started by the compose entrypoint, and checks that
// every rule evaluates without error on vLLM's real metric shapes, that the
// recording rules give one series per instance, and that none of the
// "something is broken" alerts is active on a healthy fleet.
func TestRulesOnSimulatedFleet(t *testing.T) {
	t.Parallel()
	_, flags := simFlags(t)
	instances, err := strconv.Atoi(flags["instances"])
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "prometheus")
	copyTree(t, repoPath(t, "deploy/prometheus"), dir)
	startSimViaEntrypoint(t, filepath.Join(dir, "targets", "vllm.json"))
	prom := startPrometheus(t, filepath.Join(dir, "prometheus.yml"))
	prom.waitForTargets(t, "vllm", instances)

	for _, rec := range []string{
		"instance:vllm_request_queue_time_seconds:p50_rate5m",
		"instance:vllm_request_queue_time_seconds:p90_rate5m",
		"instance:vllm_request_queue_time_seconds:p99_rate5m",
		"instance:vllm_time_to_first_token_seconds:p99_rate5m",
		"instance:vllm_inter_token_latency_seconds:p99_rate5m",
		"instance:vllm_kv_cache_usage_perc:max",
	} {
		prom.WaitForSeries(t, rec, instances, 60*time.Second)
		require.Len(t, prom.Query(t, rec), instances, "%s: one series per instance", rec)
	}

	// Every rule has been evaluated, without error.
	eventually(t, 30*time.Second, func() string {
		var data struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		}
		prom.get(t, "/api/v1/rules", &data)
		n := 0
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health == "err" {
					t.Fatalf("rule %s (group %s) fails on the simulated fleet: %s", r.Name, g.Name, r.LastError)
				}
				if r.Health != "ok" {
					return fmt.Sprintf("rule %s not evaluated yet (%s)", r.Name, r.Health)
				}
			}
		}
		if n == 0 {
			return "no rules loaded"
		}
		return ""
	})

	var alerts struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	prom.get(t, "/api/v1/alerts", &alerts)
	for _, a := range alerts.Alerts {
		switch a.Labels["alertname"] {
		case "VLLMEngineDown", "VLLMMetricsMissing", "VLLMTargetsMissing":
			t.Errorf("%s is %s on a healthy fleet: %v", a.Labels["alertname"], a.State, a.Labels)
		}
	}
}
