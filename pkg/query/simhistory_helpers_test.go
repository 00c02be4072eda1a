//go:build !mutation

package query_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// simSample is one scraped value at one instant.
type simSample struct {
	value string
	ms    int64
}

// simHistory is a simulated fleet's history in a real Prometheus: the
// fleet runs in simulated time for d (no wall clock), every instance's
// /metrics exposition is taken every scrape, as Prometheus would scrape
// it (instance="sim-<i>", job="vllm" added), and promtool turns the
// samples into blocks a Prometheus of kind k starts on. Only the sample
// names keep accepts are kept (nil keeps all). Hours of a fleet's life
// take seconds, where scraping it would take the hours.
type simHistory struct {
	Prom       *promtest.Server
	Fleet      *sim.Fleet
	Start, End time.Time
}

func runSimHistory(t *testing.T, k promtest.Kind, cfg sim.Config, d, scrape time.Duration, keep func(string) bool) simHistory {
	t.Helper()
	return runSimHistoryWith(t, k, cfg, d, scrape, keep, simTargets{})
}

// simTargets change what runSimHistoryWith scrapes: the engines' target
// labels (nil: instance="sim-<i>",job="vllm"), and other targets scraped
// beside them, each its target labels and its exposition at a scrape.
type simTargets struct {
	Labels func(i int) string
	Others []otherTarget
}

// otherTarget is a non-vLLM target of a simulated history.
type otherTarget struct {
	Labels string
	Write  func(*bytes.Buffer)
}

// runSimHistoryWith is runSimHistory with other targets and labels.
func runSimHistoryWith(t *testing.T, k promtest.Kind, cfg sim.Config, d, scrape time.Duration, keep func(string) bool, tg simTargets) simHistory {
	t.Helper()
	if tg.Labels == nil {
		tg.Labels = func(i int) string { return fmt.Sprintf(`instance="sim-%d",job="vllm"`, i) }
	}
	cfg.Epoch = time.Now().Add(-d - 10*time.Minute).Truncate(time.Minute)
	fleet, err := sim.NewFleet(cfg)
	require.NoError(t, err)
	samples := map[string]map[string][]simSample{}
	for at := scrape; at <= d; at += scrape {
		require.NoError(t, fleet.Advance(scrape))
		ms := cfg.Epoch.Add(at).UnixMilli()
		for i := range cfg.Instances {
			var buf bytes.Buffer
			require.NoError(t, fleet.WriteMetrics(&buf, i))
			addScrape(samples, buf.String(), tg.Labels(i), ms, keep)
		}
		for _, o := range tg.Others {
			var buf bytes.Buffer
			o.Write(&buf)
			addScrape(samples, buf.String(), o.Labels, ms, nil)
		}
	}
	dir := t.TempDir()
	om := filepath.Join(dir, "history.om")
	require.NoError(t, writeOpenMetrics(om, samples))
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package (scripts/test.sh installs it)")
	data := filepath.Join(dir, "data")
	b, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput()
	require.NoError(t, err, "promtool backfill: %s", b)
	srv := promtest.Start(t, promtest.Options{Backend: k, DataDir: data, ScrapeInterval: time.Hour})
	return simHistory{Prom: srv, Fleet: fleet, Start: cfg.Epoch.Add(scrape), End: cfg.Epoch.Add(d)}
}

// addScrape files one exposition's samples (no timestamps, as vLLM
// writes them) under their sample names, target labels added (an exposed
// label a target label clashes with becomes exported_<name>, as Prometheus
// does without honor_labels); the _created gauges are left out, as
// Prometheus does by default.
func addScrape(samples map[string]map[string][]simSample, text, target string, ms int64, keep func(string) bool) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		head, value := line[:sp], line[sp+1:]
		name, labels := head, target
		if i := strings.IndexByte(head, '{'); i >= 0 {
			name = head[:i]
			if inner := strings.TrimSuffix(head[i+1:], "}"); inner != "" {
				labels = exportClashes(inner, target) + "," + target
			}
		}
		if strings.HasSuffix(name, "_created") || (keep != nil && !keep(name)) {
			continue
		}
		if samples[name] == nil {
			samples[name] = map[string][]simSample{}
		}
		samples[name][labels] = append(samples[name][labels], simSample{value, ms})
	}
}

// exportClashes renames the exposed labels (name="value" pairs, as the
// text format writes them) that the target also sets to exported_<name>.
func exportClashes(exposed, target string) string {
	for _, pair := range strings.Split(target, ",") {
		name := pair[:strings.IndexByte(pair, '=')]
		exposed = strings.ReplaceAll(","+exposed, ","+name+"=", ",exported_"+name+"=")[1:]
	}
	return exposed
}

// writeOpenMetrics writes the samples as OpenMetrics, each sample name its
// own family of unknown type (PromQL reads them alike), series in order.
func writeOpenMetrics(path string, samples map[string]map[string][]simSample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	names := make([]string, 0, len(samples))
	for n := range samples {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "# TYPE %s unknown\n", n)
		for labels, ss := range samples[n] {
			for _, s := range ss {
				fmt.Fprintf(w, "%s{%s} %s %d.%03d\n", n, labels, s.value, s.ms/1000, s.ms%1000)
			}
		}
	}
	fmt.Fprintf(w, "# EOF\n")
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
