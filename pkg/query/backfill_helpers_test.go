//go:build !mutation

package query_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// omFamily is one metric family of a backfilled history: its OpenMetrics
// name and type, and its series.
type omFamily struct {
	name, typ string
	series    []omSeries
}

// omSeries is one series: the sample's full name (with _total, _bucket,
// ...), its labels as OpenMetrics writes them, its value at each sample
// time and, when set, the time of its first sample (an engine started
// later than the history).
type omSeries struct {
	name, labels string
	value        func(time.Time) float64
	from         time.Time
}

// backfilled starts a real Prometheus of kind k on blocks promtool made
// from families, sampled every step from start to end (both included):
// a history of any length at once, without waiting for scrapes, that
// nothing scrapes over later.
func backfilled(t *testing.T, k promtest.Kind, families []omFamily, start, end time.Time, step time.Duration) *promtest.Server {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package (scripts/test.sh installs it)")
	dir := t.TempDir()
	om := filepath.Join(dir, "history.om")
	f, err := os.Create(om)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for _, fam := range families {
		fmt.Fprintf(w, "# TYPE %s %s\n", fam.name, fam.typ)
		for _, s := range fam.series {
			for ts := start; !ts.After(end); ts = ts.Add(step) {
				if ts.Before(s.from) {
					continue
				}
				fmt.Fprintf(w, "%s{%s} %s %s\n", s.name, s.labels, strconv.FormatFloat(s.value(ts), 'g', -1, 64),
					strconv.FormatFloat(float64(ts.UnixMilli())/1000, 'f', -1, 64))
			}
		}
	}
	fmt.Fprintf(w, "# EOF\n")
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	data := filepath.Join(dir, "data")
	b, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput()
	require.NoError(t, err, "promtool backfill: %s", b)
	return promtest.Start(t, promtest.Options{Backend: k, DataDir: data, ScrapeInterval: time.Hour})
}
