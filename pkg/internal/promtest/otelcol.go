package promtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// OtelcolBinary finds the OpenTelemetry Collector that scripts/backends.sh
// builds from tools/otelcolhost (the Collector's own modules: the
// Prometheus receiver, the groupbyattrs and resource processors, the
// OTLP/HTTP exporter); OTELCOL_BIN overrides it. Its cache name carries a
// hash of the sources, the same the script computes.
func OtelcolBinary(t testing.TB) string {
	t.Helper()
	src := filepath.Join(repoRoot(), "tools", "otelcolhost")
	h := sha256.New()
	for _, f := range []string{"main.go", "go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("otelcol host source: %v", err)
		}
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))[:12]
	return cached(t, "OTELCOL_BIN", "otelcolhost-"+key, "bash scripts/backends.sh otelcol")
}

// Collector configures one OpenTelemetry Collector: its Prometheus receiver
// scrapes Groups as the job "vllm" and its OTLP/HTTP exporter sends to a
// Prometheus 3 started with --web.enable-otlp-receiver.
type Collector struct {
	// Groups are the scrape targets with their target labels.
	Groups []Group
	// Prom is the OTLP receiver's server.
	Prom *Server
	// ToResource are target labels moved from the points to the resource
	// (the groupbyattrs processor) under OpenTelemetry's Kubernetes names
	// (the resource processor): "namespace" becomes k8s.namespace.name and
	// "pod" k8s.pod.name, the shape kubernetes_sd and the k8sattributes
	// processor give on a cluster, so the store keeps them on target_info.
	ToResource []string
	// ScrapeInterval defaults to 1s.
	ScrapeInterval time.Duration
	// TrimSuffixes sets the receiver's trim_metric_suffixes: counters are
	// sent without _total, which a store under NoTranslation (or
	// UnderscoreEscapingWithoutSuffixes) keeps.
	TrimSuffixes bool
}

// k8sNames are the resource attributes ToResource renames labels to.
var k8sNames = map[string]string{"namespace": "k8s.namespace.name", "pod": "k8s.pod.name", "container": "k8s.container.name"}

// Config is the Collector's configuration.
func (c Collector) Config() string {
	iv := c.ScrapeInterval
	if iv == 0 {
		iv = time.Second
	}
	var b strings.Builder
	fmt.Fprintf(&b, "receivers:\n  prometheus:\n    trim_metric_suffixes: %t\n    config:\n      scrape_configs:\n        - job_name: vllm\n          scrape_interval: %s\n          static_configs:\n", c.TrimSuffixes, iv)
	for _, g := range c.Groups {
		fmt.Fprintf(&b, "            - targets: [%s]\n", quoteAll(g.Targets))
		writeLabels(&b, "              labels:\n", "                ", g.Labels)
	}
	processors := []string{}
	if len(c.ToResource) > 0 {
		fmt.Fprintf(&b, "processors:\n  groupbyattrs:\n    keys: [%s]\n  resource:\n    attributes:\n", quoteAll(c.ToResource))
		for _, l := range c.ToResource {
			to := k8sNames[l]
			if to == "" {
				to = l
				continue
			}
			fmt.Fprintf(&b, "      - {key: %q, from_attribute: %q, action: insert}\n      - {key: %q, action: delete}\n", to, l, l)
		}
		processors = []string{"groupbyattrs", "resource"}
	}
	fmt.Fprintf(&b, "exporters:\n  otlp_http:\n    endpoint: %q\n    compression: none\n", c.Prom.URL+"/api/v1/otlp")
	// No internal telemetry: its default listener (:8888) would clash
	// between tests running at once.
	fmt.Fprintf(&b, "service:\n  telemetry:\n    metrics:\n      level: none\n    logs:\n      level: warn\n")
	fmt.Fprintf(&b, "  pipelines:\n    metrics:\n      receivers: [prometheus]\n      processors: [%s]\n      exporters: [otlp_http]\n", strings.Join(processors, ", "))
	return b.String()
}

// StartCollector runs the Collector until the test ends.
func StartCollector(t testing.TB, c Collector) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "otelcol.yaml")
	writeFile(t, cfg, c.Config())
	p := startProcess(t, OtelcolBinary(t), []string{"--config=file:" + cfg}, filepath.Join(dir, "otelcol.log"))
	t.Cleanup(func() { p.kill(); _ = p.log.Close() })
}
