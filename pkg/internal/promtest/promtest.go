// Package promtest starts the real Prometheus server for integration tests:
// on 127.0.0.1 with a free port and a temporary data directory, scraping
// targets the test itself started. There is no mock here on purpose.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// ContentType is the exposition Content-Type Prometheus 3 insists on.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Options configure one Prometheus.
type Options struct {
	// Targets are host:port pairs scraped by the job "vllm".
	Targets []string
	// TargetsFile, when set, is a file_sd JSON file for the job "vllm".
	TargetsFile string
	// ScrapeInterval defaults to 1s so tests see data quickly.
	ScrapeInterval time.Duration
	// ConfigFile, when set, is used as-is instead of a generated config.
	ConfigFile string
	// DataDir, when set, is the TSDB directory (e.g. holding backfilled
	// blocks); otherwise a fresh temp dir.
	DataDir string
	// Backend is the server to run (default Debian's Prometheus 2).
	Backend Kind
	// Groups are extra static target groups of the job "vllm", each with
	// its own target labels (e.g. cluster), for shared-store tests.
	Groups []Group
	// AgentGroups are static target groups of the job "vllm-node-agent".
	AgentGroups []Group
	// NodeTargets are node exporters (host:port) scraped by the job "node".
	NodeTargets []string
	// ExternalLabels are Prometheus' global external labels (Thanos
	// sidecars require them).
	ExternalLabels map[string]string
	// Relabel is appended verbatim (YAML, indented for a scrape job) to the
	// job's relabel_configs, e.g. hashmod sharding.
	Relabel string
	// MetricRelabel is appended verbatim (YAML, indented for a scrape job)
	// as the job's metric_relabel_configs: renames and label changes made
	// on every scraped series, e.g. to give a simulator a stack's names.
	MetricRelabel string
	// ExtraJobs is appended verbatim (YAML list items, indented for
	// scrape_configs) after the generated jobs: exporters scraped with their
	// own settings, e.g. honor_labels.
	ExtraJobs string
	// Args are extra command-line flags (e.g. --query.timeout=10m).
	Args []string
	// RuleFiles are rule files Prometheus loads and evaluates every
	// ScrapeInterval (groups with their own interval keep it), e.g. the
	// copies ShippedRuleFiles writes. Prometheus only: VictoriaMetrics
	// leaves rules to vmalert (see ReplayRules).
	RuleFiles []string
	// Alertmanagers are Alertmanagers (host:port) Prometheus sends its
	// alerts to, e.g. StartAlertmanager's Addr; Prometheus only.
	Alertmanagers []string
	// OTLP is appended verbatim (YAML, indented for the otlp: section) as
	// Prometheus 3's OTLP settings, e.g. "  translation_strategy: …";
	// start it with --web.enable-otlp-receiver in Args.
	OTLP string
}

// Group is one static target group with target labels.
type Group struct {
	Targets []string
	Labels  map[string]string
}

// Server is a running Prometheus.
type Server struct {
	URL     string
	Addr    string
	Backend Kind
	// Dir holds the config, the data and the log.
	Dir string

	proc    *process // the running process; see control.go
	logPath string
}

// Binary finds the prometheus executable or fails the test with what to do.
func Binary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PROMETHEUS_BIN"), "prometheus", "/usr/bin/prometheus"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("prometheus is not installed: run the README's test command (it runs apt-get install -y prometheus) or set PROMETHEUS_BIN")
	return ""
}

// Start launches Prometheus and waits until it is ready. It is stopped and
// its data removed when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := binaryFor(t, o.Backend)
	dir := t.TempDir()
	cfg := o.ConfigFile
	if cfg == "" {
		cfg = filepath.Join(dir, "prometheus.yml")
		writeFile(t, cfg, Config(o))
	}
	addr := freeAddr(t)
	data := o.DataDir
	if data == "" {
		data = filepath.Join(dir, "data")
	}
	argv := append(args(o.Backend, cfg, data, addr), o.Args...)
	s := &Server{URL: "http://" + addr, Addr: addr, Backend: o.Backend, Dir: dir, logPath: filepath.Join(dir, "prometheus.log")}
	s.proc = startProcess(t, bin, argv, s.logPath)
	t.Cleanup(func() { s.proc.kill(); _ = s.proc.log.Close() })
	s.waitReady(t, readyPath(o.Backend), s.logPath)
	return s
}

// Config renders a scrape config for the options.
func Config(o Options) string {
	iv := o.ScrapeInterval
	if iv == 0 {
		iv = time.Second
	}
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n", iv, iv)
	writeLabels(&b, "  external_labels:\n", "    ", o.ExternalLabels)
	if len(o.RuleFiles) > 0 {
		fmt.Fprintf(&b, "rule_files: [%s]\n", quoteAll(o.RuleFiles))
	}
	if o.OTLP != "" {
		b.WriteString("otlp:\n" + o.OTLP)
	}
	if len(o.Alertmanagers) > 0 {
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%s]\n", quoteAll(o.Alertmanagers))
	}
	b.WriteString("scrape_configs:\n  - job_name: vllm\n")
	if o.Relabel != "" {
		b.WriteString("    relabel_configs:\n" + o.Relabel)
	}
	if o.MetricRelabel != "" {
		b.WriteString("    metric_relabel_configs:\n" + o.MetricRelabel)
	}
	if o.TargetsFile != "" {
		fmt.Fprintf(&b, "    file_sd_configs:\n      - files: [%q]\n        refresh_interval: 1s\n", o.TargetsFile)
	}
	if len(o.Targets) > 0 {
		quoted := make([]string, len(o.Targets))
		for i, tg := range o.Targets {
			quoted[i] = fmt.Sprintf("%q", tg)
		}
		fmt.Fprintf(&b, "    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
	}
	if len(o.Groups) > 0 && len(o.Targets) == 0 {
		b.WriteString("    static_configs:\n")
	}
	writeGroups(&b, o.Groups)
	if len(o.AgentGroups) > 0 {
		b.WriteString("  - job_name: vllm-node-agent\n    static_configs:\n")
		writeGroups(&b, o.AgentGroups)
	}
	b.WriteString(o.ExtraJobs)
	if len(o.NodeTargets) > 0 {
		fmt.Fprintf(&b, "  - job_name: node\n    static_configs:\n      - targets: [%s]\n", quoteAll(o.NodeTargets))
	}
	return b.String()
}

func writeGroups(b *strings.Builder, gs []Group) {
	for _, g := range gs {
		fmt.Fprintf(b, "      - targets: [%s]\n", quoteAll(g.Targets))
		writeLabels(b, "        labels:\n", "          ", g.Labels)
	}
}

func quoteAll(vs []string) string {
	quoted := make([]string, len(vs))
	for i, v := range vs {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}

// writeLabels writes a YAML map of labels in a stable order.
func writeLabels(b *strings.Builder, head, indent string, ls map[string]string) {
	if len(ls) == 0 {
		return
	}
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString(head)
	for _, n := range names {
		fmt.Fprintf(b, "%s%s: %q\n", indent, n, ls[n])
	}
}

func (s *Server) waitReady(t testing.TB, path, logPath string) {
	t.Helper()
	waitOK(t, s.Backend.Name(), s.URL+path, logPath)
}

// waitOK polls url until it answers 200, or fails the test with the
// server's log after 30s.
func waitOK(t testing.TB, name, url, logPath string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(logPath)
	t.Fatalf("%s at %s not ready after 30s; log:\n%s", name, url, log)
}

// Query runs an instant query and returns the raw "result" array.
func (s *Server) Query(t testing.TB, expr string) []json.RawMessage {
	t.Helper()
	resp, err := http.Get(s.URL + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatalf("query %q: %v", expr, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %q: status %q error %q decode %v", expr, body.Status, body.Error, err)
	}
	return body.Data.Result
}

// WaitForSeries polls expr until it returns at least n series.
func (s *Server) WaitForSeries(t testing.TB, expr string, n int, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if len(s.Query(t, expr)) >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus: %q did not reach %d series within %s", expr, n, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ServeExposition starts an HTTP server that serves body at /metrics with
// the exposition Content-Type, and returns its host:port.
func ServeExposition(t testing.TB, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// ServeFile serves a testdata exposition file; see ServeExposition.
func ServeFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return ServeExposition(t, b)
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// ClosedURL returns an http URL on loopback where nothing listens: a
// Prometheus that is down.
func ClosedURL(t testing.TB) string {
	t.Helper()
	return "http://" + freeAddr(t)
}
