package fleetbench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// The suite's defaults; scripts/bench.sh passes 1,000 and 10,000 engines.
var (
	tableEngines = flag.Int("bench.fleet.engines", 10, "engines in the backfilled fleet of the fleet-table bench")
	tableReps    = flag.Int("bench.fleet.reps", 3, "timed repetitions of the fleet query, plugin and raw interleaved")
)

// tableStep is the backfill's sample spacing and the data source's scrape
// interval: the fleet query's rate window is four of them.
const tableStep = 15 * time.Second

// TestFleetTableBench measures the fleet query type through the plugin
// binary over gRPC against its own PromQL (the dozen instant expressions
// from its ExecutedQueryString) sent concurrently as raw HTTP, on a
// backfilled fleet; it checks that the table has a row per engine and
// prints the medians. It never asserts a time.
func TestFleetTableBench(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package (scripts/test.sh installs it)")
	dir := t.TempDir()
	t0 := time.Now().Truncate(tableStep)
	f := Fleet{Engines: *tableEngines, Start: t0.Add(-10 * time.Minute), End: t0.Add(5 * time.Minute), Step: tableStep}
	om := filepath.Join(dir, "fleet.om")
	out, err := os.Create(om)
	require.NoError(t, err)
	require.NoError(t, WriteFleetTableMetrics(out, f))
	require.NoError(t, out.Close())
	b, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, filepath.Join(dir, "data")).CombinedOutput()
	require.NoError(t, err, "promtool backfill: %s", b)
	require.NoError(t, os.Remove(om))
	prom := promtest.Start(t, promtest.Options{DataDir: filepath.Join(dir, "data"), ScrapeInterval: time.Hour, Args: []string{"--query.timeout=10m"}})
	host := grafanahost.Launch(t, grafanahost.Build(t))
	ds := backend.DataSourceInstanceSettings{UID: "fleet-bench", URL: prom.URL,
		JSONData: []byte(`{"scrapeInterval":"15s","queryTimeout":"4m"}`), Updated: time.Unix(1_700_000_000, 0)}

	fleetQuery := func(end time.Time) (rows int, exprs []string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		q := backend.DataQuery{RefID: "A", JSON: []byte(`{"queryType":"fleet"}`), Interval: tableStep, MaxDataPoints: 100,
			TimeRange: backend.TimeRange{From: end.Add(-5 * time.Minute), To: end}}
		resp, err := host.QueryDataErr(ctx, ds, nil, q)
		if err != nil {
			return 0, nil, err
		}
		dr := resp.Responses["A"]
		if dr.Error != nil {
			return 0, nil, dr.Error
		}
		fr := dr.Frames[0]
		s := strings.TrimPrefix(fr.Meta.ExecutedQueryString, "Expr: ")
		return fr.Rows(), strings.Split(s[:strings.LastIndex(s, "\nStep: ")], "\n"), nil
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	raw := func(exprs []string, end time.Time) error {
		var wg sync.WaitGroup
		errs := make(chan error, len(exprs))
		for _, x := range exprs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.PostForm(prom.URL+"/api/v1/query", url.Values{"query": {x}, "time": {strconv.FormatInt(end.Unix(), 10)}})
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				if _, err := io.ReadAll(resp.Body); err != nil || resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("HTTP %d %v for %s", resp.StatusCode, err, x)
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}

	rows, exprs, err := fleetQuery(t0) // warm-up: learns the PromQL
	require.NoError(t, err)
	require.Equal(t, *tableEngines, rows, "one row per engine")
	var pt, rt []time.Duration
	for i := range *tableReps {
		end := t0.Add(-time.Duration(i+1) * tableStep) // a new range each time: nothing from the plugin's cache
		plugin := func() {
			start := time.Now()
			n, _, err := fleetQuery(end)
			pt = append(pt, time.Since(start))
			require.NoError(t, err)
			require.Equal(t, *tableEngines, n)
		}
		rawRun := func() {
			start := time.Now()
			require.NoError(t, raw(exprs, end))
			rt = append(rt, time.Since(start))
		}
		if i%2 == 0 {
			plugin()
			rawRun()
		} else {
			rawRun()
			plugin()
		}
	}
	p, r := median(pt), median(rt)
	fmt.Printf("| fleet table, %d engines (%d instant expressions) | %s | %s | %.2fx |\n", *tableEngines, len(exprs), ms(p), ms(r), float64(p)/float64(r))
}
