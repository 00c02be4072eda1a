package promtest

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NodeExporterBinary finds Debian's prometheus-node-exporter (or
// NODE_EXPORTER_BIN), or fails the test saying how to install it: a
// missing exporter is a failure, never a skip.
func NodeExporterBinary(t testing.TB) string {
	t.Helper()
	return lookPath(t, "NODE_EXPORTER_BIN", "prometheus-node-exporter", "apt-get install -y prometheus-node-exporter")
}

// StartNodeExporter runs the real node exporter on 127.0.0.1 with a free
// port, only with the collectors the host query reads (cpu, meminfo,
// netdev, diskstats, loadavg, pressure), and returns its host:port once
// /metrics answers. It stops with the test.
func StartNodeExporter(t testing.TB) string {
	t.Helper()
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "node-exporter.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("node exporter log: %v", err)
	}
	args := []string{"--web.listen-address=" + addr, "--collector.disable-defaults"}
	for _, c := range []string{"cpu", "meminfo", "netdev", "diskstats", "loadavg", "pressure"} {
		args = append(args, "--collector."+c)
	}
	cmd := exec.Command(NodeExporterBinary(t), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node exporter: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(logPath)
	t.Fatalf("node exporter at %s not ready after 20s; log:\n%s", addr, strings.TrimSpace(string(log)))
	return ""
}
