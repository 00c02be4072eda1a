package promtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CAdvisorHostBinary finds the host over cAdvisor's library that
// scripts/backends.sh builds from tools/cadvisorhost (CADVISOR_HOST_BIN
// overrides it). Its cache name carries a hash of the host's sources, the
// same the script computes, so a changed host is never run stale.
func CAdvisorHostBinary(t testing.TB) string {
	t.Helper()
	src := filepath.Join(repoRoot(), "tools", "cadvisorhost")
	h := sha256.New()
	for _, f := range []string{"main.go", "go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("cadvisor host source: %v", err)
		}
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))[:12]
	return cached(t, "CADVISOR_HOST_BIN", "cadvisorhost-"+key, "bash scripts/backends.sh cadvisorhost")
}

// StartCAdvisor runs the cAdvisor host on 127.0.0.1 (a free port), watching
// the raw cgroups under the given path prefixes (all when none), with
// cAdvisor's housekeeping every second and not slowed down for idle
// cgroups, and returns its host:port once it listens. It stops with the test.
func StartCAdvisor(t testing.TB, prefixes ...string) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "cadvisor.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("cadvisor log: %v", err)
	}
	cmd := exec.Command(CAdvisorHostBinary(t), "-listen", "127.0.0.1:0", "-housekeeping_interval", "1s",
		"-allow_dynamic_housekeeping=false", "-raw_cgroup_prefix_whitelist", strings.Join(prefixes, ","))
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("cadvisor stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cadvisor host: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(60 * time.Second):
		log, _ := os.ReadFile(logPath)
		t.Fatalf("cadvisor host did not listen within 60s; log:\n%s", strings.TrimSpace(string(log)))
		return ""
	}
}
