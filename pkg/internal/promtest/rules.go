package promtest

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// RecordingRulesFile is the shipped recording-rule file, from the repository root.
const RecordingRulesFile = "deploy/prometheus/rules/vllm-recording.rules.yml"

// repoRoot is the repository root, found from this file's path.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

var intervalRE = regexp.MustCompile(`(?m)^(\s+interval:\s*)\S+\s*$`)

// RuleFileEvery writes a copy of the shipped recording rules whose groups
// are evaluated every interval instead of 30s (the expressions, windows and
// names unchanged), so tests need not wait for 30s evaluations; it returns
// the copy's path.
func RuleFileEvery(t testing.TB, interval time.Duration) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), RecordingRulesFile))
	if err != nil {
		t.Fatalf("read %s: %v", RecordingRulesFile, err)
	}
	out := intervalRE.ReplaceAll(b, []byte("${1}"+interval.String()))
	path := filepath.Join(t.TempDir(), "vllm-recording.rules.yml")
	writeFile(t, path, string(out))
	return path
}

// ShippedRulesGlob is the glob of the shipped rule files Prometheus loads
// (deploy/prometheus/prometheus*.yml: rules/*.rules.yml), from the
// repository root; it leaves out their unit tests (*.rules.test.yml).
const ShippedRulesGlob = "deploy/prometheus/rules/*.rules.yml"

var forRE = regexp.MustCompile(`(?m)^([ \t]+for:[ \t]*)(\S+)[ \t]*$`)

// ShippedRuleFiles writes copies of every shipped rule file for a test of
// alerts that must fire within minutes: groups with their own interval
// are evaluated every interval instead, and every alert's `for:` is
// divided by forDivisor (rounded to whole seconds, at least 1s); the
// expressions, their windows, labels and annotations are unchanged. It
// returns the copies' paths.
func ShippedRuleFiles(t testing.TB, interval time.Duration, forDivisor int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), ShippedRulesGlob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files match %s (%v)", ShippedRulesGlob, err)
	}
	dir := t.TempDir()
	out := make([]string, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		b = intervalRE.ReplaceAll(b, []byte("${1}"+interval.String()))
		b = shortenFor(t, f, b, forDivisor)
		path := filepath.Join(dir, filepath.Base(f))
		writeFile(t, path, string(b))
		out = append(out, path)
	}
	return out
}

// shortenFor divides every `for:` duration of a rule file by divisor.
func shortenFor(t testing.TB, file string, b []byte, divisor int) []byte {
	t.Helper()
	return forRE.ReplaceAllFunc(b, func(line []byte) []byte {
		m := forRE.FindSubmatch(line)
		d, err := model.ParseDuration(string(m[2]))
		if err != nil {
			t.Fatalf("%s: for: %q: %v", file, m[2], err)
		}
		short := max((time.Duration(d) / time.Duration(divisor)).Round(time.Second), time.Second)
		return []byte(string(m[1]) + model.Duration(short).String())
	})
}

// BackfillRules evaluates the rule file over [start, end] against this
// Prometheus with promtool (at the times a running rule group would: each
// group at its own phase inside its interval, derived from its name and
// file; with every scraped sample already stored), then restarts the
// server on a snapshot of its data plus the recorded blocks: the recorded
// series are then where a running rule group would have put them, without
// the race between a scrape and an evaluation. The server must run with
// --web.enable-admin-api (Options.Args) for the snapshot. A snapshot,
// because a TSDB replaying its write-ahead log drops samples older than
// its newest block, which the recorded blocks would be.
func (s *Server) BackfillRules(t testing.TB, ruleFile string, start, end time.Time) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "blocks")
	cmd := exec.Command(promtoolBinary(t), "tsdb", "create-blocks-from", "rules", "--quiet",
		"--url="+s.URL, "--start="+strconv.FormatInt(start.Unix(), 10), "--end="+strconv.FormatInt(end.Unix(), 10),
		"--output-dir="+out, ruleFile)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool create-blocks-from rules: %v\n%s", err, b)
	}
	snap := s.snapshot(t)
	s.shutdown(t)
	data := filepath.Join(s.Dir, "data")
	old := filepath.Join(s.Dir, "data.old")
	if err := os.Rename(data, old); err != nil {
		t.Fatalf("move data: %v", err)
	}
	if err := os.Rename(filepath.Join(old, "snapshots", snap), data); err != nil {
		t.Fatalf("move snapshot: %v", err)
	}
	moveBlocks(t, out, data)
	s.Restart(t)
}

// snapshot asks the admin API for a snapshot of every block and the head,
// and returns its directory name under data/snapshots.
func (s *Server) snapshot(t testing.TB) string {
	t.Helper()
	resp, err := http.Post(s.URL+"/api/v1/admin/tsdb/snapshot", "", nil)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Data.Name == "" {
		t.Fatalf("snapshot: status %s, decode %v (is --web.enable-admin-api set?)", resp.Status, err)
	}
	return body.Data.Name
}

// shutdown stops the server with SIGTERM, so its write-ahead log is whole.
func (s *Server) shutdown(t testing.TB) {
	t.Helper()
	if err := s.proc.signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM %s: %v", s.Backend, err)
	}
	s.proc.mu.Lock()
	cmd := s.proc.cmd
	s.proc.mu.Unlock()
	_ = cmd.Wait()
}

// moveBlocks moves every block directory promtool wrote into the TSDB.
func moveBlocks(t testing.TB, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatalf("read blocks: %v", err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatalf("move block %s: %v", e.Name(), err)
		}
	}
	if len(entries) == 0 {
		t.Fatalf("promtool wrote no blocks")
	}
}

// promtoolBinary finds Debian's promtool next to its Prometheus.
func promtoolBinary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PROMTOOL_BIN"), "promtool", "/usr/bin/promtool"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("promtool is not installed: apt-get install -y prometheus, or set PROMTOOL_BIN")
	return ""
}
