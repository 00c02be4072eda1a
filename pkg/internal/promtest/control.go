package promtest

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

// process is one run of the Prometheus binary; Restart starts another on
// the same data directory and address.
type process struct {
	bin  string
	args []string
	log  *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
}

func startProcess(t testing.TB, bin string, args []string, logPath string) *process {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("open prometheus log: %v", err)
	}
	p := &process{bin: bin, args: args, log: logFile}
	p.start(t)
	return p
}

func (p *process) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

func (p *process) signal(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Signal(sig)
}

// kill ends the process with SIGKILL (continuing it first if stopped).
func (p *process) kill() {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// Kill ends Prometheus with SIGKILL, as the OOM killer or a node failure
// does; its data directory stays for Restart.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.proc.kill()
}

// Restart starts Prometheus again on the same data directory and address
// and waits until it is ready (it replays its write-ahead log first).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.proc.start(t)
	s.waitReady(t, readyPath(s.Backend), s.logPath)
}

// Stop freezes Prometheus with SIGSTOP: connections are accepted by the
// kernel but nothing answers, like a server stuck in a long GC or swap.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.proc.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP prometheus: %v", err)
	}
}

// Continue resumes Prometheus after Stop.
func (s *Server) Continue(t testing.TB) {
	t.Helper()
	if err := s.proc.signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT prometheus: %v", err)
	}
}
