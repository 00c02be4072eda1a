package promtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Sidecar is a running thanos sidecar in front of one Prometheus.
type Sidecar struct {
	// GRPC is the Store API address thanos query reads from.
	GRPC string
	proc *auxProcess
}

// Stop kills the sidecar, as when a store goes away under a querier.
func (s *Sidecar) Stop() {
	_ = s.proc.cmd.Process.Kill()
	<-s.proc.exited
}

// StartSidecar runs `thanos sidecar` for a Prometheus started by Start
// (which must have external labels: the sidecar refuses to run without).
func StartSidecar(t testing.TB, p *Server) *Sidecar {
	t.Helper()
	log := filepath.Join(p.Dir, "sidecar.log")
	var grpc string
	proc, _ := startListening(t, "thanos sidecar", log, func() (*auxProcess, string) {
		var httpAddr string
		grpc, httpAddr = freeAddr(t), freeAddr(t)
		return startAux(t, ThanosBinary(t), log, "sidecar",
			"--tsdb.path="+filepath.Join(p.Dir, "data"), "--prometheus.url="+p.URL,
			"--grpc-address="+grpc, "--http-address="+httpAddr, "--log.level=warn"), httpAddr
	})
	return &Sidecar{GRPC: grpc, proc: proc}
}

// StartQuery runs `thanos query` over the given Store API endpoints, with
// extra flags such as --query.replica-label=replica. The returned Server
// speaks the Prometheus HTTP API, as Grafana's data source sees it.
func StartQuery(t testing.TB, endpoints []string, extra ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "query.log")
	_, addr := startListening(t, "thanos query", log, func() (*auxProcess, string) {
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
		return startAux(t, ThanosBinary(t), log, append(args, extra...)...), addr
	})
	return &Server{URL: "http://" + addr, Addr: addr, Backend: "thanos query", Dir: dir}
}

// auxProcess is a started Thanos component; exited closes when it ends.
type auxProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startAux starts bin with its output in logPath and kills it when the
// test ends.
func startAux(t testing.TB, bin, logPath string, args ...string) *auxProcess {
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
	p := &auxProcess{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		_ = logFile.Close()
	})
	return p
}

// startListening starts a component with start (which picks its ports and
// returns its HTTP address) until it is ready, on fresh ports when it could
// not bind one: a port freeAddr found free can be taken by another test's
// process before the component binds it (seen in a full run: "bind:
// address already in use").
func startListening(t testing.TB, name, logPath string, start func() (*auxProcess, string)) (*auxProcess, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, addr := start()
		if ready(p, "http://"+addr+"/-/ready", 30*time.Second) {
			return p, addr
		}
		log, _ := os.ReadFile(logPath)
		if attempt < 3 && strings.Contains(string(log), "address already in use") {
			_ = p.cmd.Process.Kill()
			<-p.exited
			continue
		}
		t.Fatalf("%s at %s not ready after 30s; log:\n%s", name, addr, log)
	}
}

// ready polls url until it answers 200, the process ends or the time is up.
func ready(p *auxProcess, url string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-p.exited:
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
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
