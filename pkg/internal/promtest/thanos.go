package promtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Sidecar is a running thanos sidecar in front of one Prometheus.
type Sidecar struct {
	// GRPC is the Store API address thanos query reads from.
	GRPC string
	cmd  *exec.Cmd
}

// Stop kills the sidecar, as when a store goes away under a querier.
func (s *Sidecar) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// StartSidecar runs `thanos sidecar` for a Prometheus started by Start
// (which must have external labels: the sidecar refuses to run without).
func StartSidecar(t testing.TB, p *Server) *Sidecar {
	t.Helper()
	grpc, http := freeAddr(t), freeAddr(t)
	cmd := startAux(t, ThanosBinary(t), filepath.Join(p.Dir, "sidecar.log"), "sidecar",
		"--tsdb.path="+filepath.Join(p.Dir, "data"), "--prometheus.url="+p.URL,
		"--grpc-address="+grpc, "--http-address="+http, "--log.level=warn")
	s := &Sidecar{GRPC: grpc, cmd: cmd}
	(&Server{URL: "http://" + http, Backend: "thanos sidecar"}).waitReady(t, "/-/ready", filepath.Join(p.Dir, "sidecar.log"))
	return s
}

// StartQuery runs `thanos query` over the given Store API endpoints, with
// extra flags such as --query.replica-label=replica. The returned Server
// speaks the Prometheus HTTP API, as Grafana's data source sees it.
func StartQuery(t testing.TB, endpoints []string, extra ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	args := []string{"query", "--http-address=" + addr, "--grpc-address=" + freeAddr(t), "--log.level=warn", "--store.sd-interval=1s"}
	if !hasFlag(extra, "--endpoint.info-timeout") {
		// Look at the endpoints every second rather than every 5s, so a
		// store is usable (and a dead one noticed) quickly. The same
		// flag sets how often Thanos health-checks them.
		args = append(args, "--endpoint.info-timeout=1s")
	}
	for _, e := range endpoints {
		args = append(args, "--endpoint="+e)
	}
	log := filepath.Join(dir, "query.log")
	startAux(t, ThanosBinary(t), log, append(args, extra...)...)
	s := &Server{URL: "http://" + addr, Addr: addr, Backend: "thanos query", Dir: dir}
	s.waitReady(t, "/-/ready", log)
	return s
}

// startAux starts bin with its output in logPath and kills it when the
// test ends.
func startAux(t testing.TB, bin, logPath string, args ...string) *exec.Cmd {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("create %s: %v", logPath, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %v: %v", bin, args, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
	})
	return cmd
}

// Log returns what the server wrote to its log so far.
func (s *Server) Log(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "prometheus.log"))
	if err != nil {
		t.Fatalf("read %s log: %v", s.Backend, err)
	}
	return string(b)
}

// HashmodShard relabels the job's targets by the hash of the target label
// key and keeps those of shard i of n, as sharded Prometheus servers do.
func HashmodShard(key string, i, n int) string {
	return fmt.Sprintf("      - source_labels: [%s]\n        modulus: %d\n        target_label: __tmp_shard\n        action: hashmod\n"+
		"      - source_labels: [__tmp_shard]\n        regex: \"%d\"\n        action: keep\n", key, n, i)
}

// hasFlag reports whether args set the flag name (as --name=value).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
