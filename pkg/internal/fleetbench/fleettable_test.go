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
)

// The suite's defaults; scripts/bench.sh passes 1,000 and 10,000 engines.
var (
	tableEngines = flag.Int("bench.fleet.engines", 10, "engines in the backfilled fleet of the fleet-table bench")
	tableReps    = flag.Int("bench.fleet.reps", 3, "timed repetitions of the fleet query, rules on, rules off and raw interleaved")
	// The plugin looks for the recording rules at the wall clock's now, so
	// the history (and the rules recorded over it) must reach past the end
	// of the setup, which takes minutes at 10,000 engines.
	tableAhead = flag.Duration("bench.fleet.ahead", 10*time.Minute, "history written past the start of the fleet-table bench")
	// tableCasesOn adds saturation and slo, rules on, off and raw, on the
	// table's fleet (fleetcases_test.go).
	tableCasesOn = flag.Bool("bench.fleet.cases", false, "also measure saturation and slo on the fleet table's fleet")
	tableJoin    = flag.Bool("bench.fleet.join", true, "also measure the fleet table with pods joined from target_info")
)

// tableStep is the backfill's sample spacing and the data source's scrape
// interval: the fleet query's rate window is four of them (1m, a window
// the recording rules record).
const tableStep = 15 * time.Second

// TestFleetTableBench measures the fleet query type three ways,
// interleaved, on a backfilled fleet with the shipped recording rules'
// series backfilled over it: through the plugin binary over gRPC with
// recordingRules on and with it off, and the rules-off plan's own PromQL
// (the instant expressions from its ExecutedQueryString) sent
// concurrently as raw HTTP. It checks that each table has a row per
// engine, that the rules-on answers say they were read from the rules and
// the rules-off ones do not, and prints the medians. It never asserts a
// time.
func TestFleetTableBench(t *testing.T) {
	b := setUpTable(t)
	// Warm-ups, at the first measured range's end less a step: the rules'
	// discovery and coverage check, and the rules-off plan's PromQL.
	warm := b.t0.Add(-time.Duration(*tableReps) * tableStep)
	on, err := b.fleet(b.on, warm)
	require.NoError(t, err)
	off, err := b.fleet(b.off, warm)
	require.NoError(t, err)
	b.requireTable(t, on, true)
	b.requireTable(t, off, false)
	r := b.measure(t, off.exprs, warm)
	fmt.Print(r.render(len(on.exprs), len(off.exprs)))
	// Where the time goes: each plan's expressions alone, at the last
	// measured instant (its answers are in Prometheus' caches no more than
	// any other's: Prometheus caches no results).
	last := warm.Add(time.Duration(*tableReps) * tableStep)
	reps := min(*tableReps, 3)
	fmt.Print(renderProfile("rules on", b.profile(t, on.exprs, last, reps)))
	fmt.Print(renderProfile("rules off", b.profile(t, off.exprs, last, reps)))
	if *tableCasesOn {
		b.casesBench(t)
	}
	if *tableJoin {
		b.joinBench(t, warm)
	}
}

// joinBench measures what naming servers by a pod that only target_info
// holds costs (an OTLP-fed store: the plugin joins k8s_pod_name on with
// group_left) against the rules-off plan that reads the instance on the
// series (what a store that promotes the attribute, or Prometheus
// scraping, gives), interleaved, and profiles the joined plan's
// expressions. It checks that the joined table has a row per engine and
// that its plan joins target_info.
func (b *tableBench) joinBench(t *testing.T, warm time.Time) {
	joined := backend.DataSourceInstanceSettings{UID: "fleet-bench-joined", URL: b.prom.URL, Updated: time.Unix(1_700_000_000, 0),
		JSONData: []byte(`{"scrapeInterval":"15s","queryTimeout":"4m","recordingRules":false,"instanceLabel":"pod"}`)}
	a, err := b.fleet(joined, warm)
	require.NoError(t, err)
	b.requireTable(t, a, false)
	require.Contains(t, strings.Join(a.exprs, "\n"), "group_left (pod)", "the joined plan joins target_info")
	var off, join tableTimes
	for i := range *tableReps {
		// Ends the measure above did not use: nothing from the plugin's cache.
		end := warm.Add(time.Duration(*tableReps+i+1) * tableStep)
		runs := []func(){
			func() { b.timed(t, &off, func() error { _, err := b.fleet(b.off, end); return err }) },
			func() { b.timed(t, &join, func() error { _, err := b.fleet(joined, end); return err }) },
		}
		for j := range runs {
			runs[(i+j)%len(runs)]()
		}
	}
	fmt.Printf("| fleet table, %d engines: pod from target_info (joined) / instance on the series (plain) | %s | %s | %.2f× | Prometheus eval %.3f s / %.3f s |\n",
		*tableEngines, ms(median(join.wall)), ms(median(off.wall)), ratio(median(join.wall), median(off.wall)), medianF(join.eval), medianF(off.eval))
	fmt.Print(renderProfile("joined", b.profile(t, a.exprs, warm.Add(time.Duration(2**tableReps)*tableStep), min(*tableReps, 3))))
}

// tableBench is the backfilled fleet, with its recording rules, in a
// Prometheus, and the plugin with a rules-on and a rules-off data source.
type tableBench struct {
	*env
	on, off backend.DataSourceInstanceSettings
}

// setUpTable builds the plugin, backfills the fleet from 10 minutes
// before now to tableAhead after it, and the recording rules over it, and
// starts Prometheus and the plugin. The measured instants (reps steps
// before now, to now) lie where every rule has evaluations within the
// look-back: from the history's start plus the group's phase (under its
// 30s interval) and the 1m rate window, to past the history's end.
func setUpTable(t *testing.T) *tableBench {
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package (scripts/test.sh installs it)")
	plugin := grafanahost.Build(t) // before the clock starts: the history is anchored to now
	dir := t.TempDir()
	t0 := time.Now().Truncate(tableStep)
	f := Fleet{Engines: *tableEngines, Start: t0.Add(-10 * time.Minute), End: t0.Add(*tableAhead), Step: tableStep}
	om := filepath.Join(dir, "fleet.om")
	out, err := os.Create(om)
	require.NoError(t, err)
	require.NoError(t, WriteFleetTableMetrics(out, f))
	require.NoError(t, out.Close())
	data := filepath.Join(dir, "data")
	b, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput()
	require.NoError(t, err, "promtool backfill: %s", b)
	require.NoError(t, os.Remove(om))
	e := &env{t0: t0, http: &http.Client{Timeout: 5 * time.Minute}, step: tableStep,
		prom: startOnOwnData(t, data, []string{"--query.timeout=10m", "--web.enable-admin-api"})}
	// The rules run on past the history: the load gauges' rules record
	// for the 5-minute look-back after the last sample, which gives the
	// plugin's discovery (at the wall clock's now, again 5 minutes later
	// when it refreshes) that long more.
	recorded := f.End.Add(5 * time.Minute)
	BackfillRules(t, e.prom, f.Start, recorded, *tableEngines)
	took := time.Since(t0).Round(time.Second)
	require.True(t, time.Now().Before(recorded), "the setup took %s, past the recorded series (%s after the start): raise -bench.fleet.ahead",
		took, recorded.Sub(t0))
	t.Logf("setup: %s of the %s the recorded series allow", took, recorded.Sub(t0))
	e.launch(t, plugin)
	mk := func(uid, rules string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{UID: uid, URL: e.prom.URL, Updated: time.Unix(1_700_000_000, 0),
			JSONData: []byte(`{"scrapeInterval":"15s","queryTimeout":"4m","recordingRules":` + rules + `}`)}
	}
	return &tableBench{env: e, on: mk("fleet-bench-rules-on", "true"), off: mk("fleet-bench", "false")}
}

// tableAnswer is what one fleet query through the plugin gave.
type tableAnswer struct {
	rows  int
	exprs []string // the instant expressions it ran
	rules bool     // it carries the recording-rules notice
}

// fleet runs the fleet query on ds for the 5-minute range ending at end.
func (b *tableBench) fleet(ds backend.DataSourceInstanceSettings, end time.Time) (tableAnswer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	q := backend.DataQuery{RefID: "A", JSON: []byte(`{"queryType":"fleet"}`), Interval: tableStep, MaxDataPoints: 100,
		TimeRange: backend.TimeRange{From: end.Add(-5 * time.Minute), To: end}}
	resp, err := b.host.QueryDataErr(ctx, ds, nil, q)
	if err != nil {
		return tableAnswer{}, fmt.Errorf("QueryData over gRPC: %w", err)
	}
	dr := resp.Responses["A"]
	if dr.Error != nil {
		return tableAnswer{}, dr.Error
	}
	if len(dr.Frames) == 0 || dr.Frames[0].Meta == nil {
		return tableAnswer{}, fmt.Errorf("fleet answer without a table frame and its executed query")
	}
	fr := dr.Frames[0]
	s := strings.TrimPrefix(fr.Meta.ExecutedQueryString, "Expr: ")
	if i := strings.LastIndex(s, "\nStep: "); i >= 0 {
		s = s[:i]
	}
	return tableAnswer{rows: fr.Rows(), exprs: strings.Split(s, "\n"), rules: answeredFromRules(dr)}, nil
}

// requireTable checks a table's rows and whether it came from the rules.
func (b *tableBench) requireTable(t *testing.T, a tableAnswer, rules bool) {
	require.Equal(t, *tableEngines, a.rows, "one row per engine")
	if rules {
		require.True(t, a.rules, "the rules-on fleet table lacks the notice %q", rulesNotice)
	} else {
		require.False(t, a.rules, "the rules-off fleet table carries the notice %q", rulesNotice)
	}
}

// rawFleet sends the expressions concurrently as raw instant queries at
// end and reads every answer whole, the least any client pays.
func (b *tableBench) rawFleet(exprs []string, end time.Time) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(exprs))
	for _, x := range exprs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := b.http.PostForm(b.prom.URL+"/api/v1/query", url.Values{"query": {x}, "time": {strconv.FormatInt(end.Unix(), 10)}})
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

// tableTimes are one way's runs: wall times and Prometheus' evaluation
// seconds during each.
type tableTimes struct {
	wall []time.Duration
	eval []float64
}

// timed runs one way once, between two reads of Prometheus' evaluation
// seconds (outside the clock).
func (b *tableBench) timed(t *testing.T, tt *tableTimes, run func() error) {
	ev := b.evalSeconds(t)
	start := time.Now()
	err := run()
	tt.wall = append(tt.wall, time.Since(start))
	tt.eval = append(tt.eval, b.evalSeconds(t)-ev)
	require.NoError(t, err)
}

// tableResult is the three ways' medians.
type tableResult struct {
	on, off, raw             time.Duration
	evalOn, evalOff, evalRaw float64
}

// measure runs reps rounds of rules on, rules off and raw HTTP, in an
// order that rotates each round, each round on a range one step later
// than the last (nothing from the plugin's cache; the rules' coverage of
// the earliest end was checked in the warm-up, as on a dashboard).
func (b *tableBench) measure(t *testing.T, exprs []string, warm time.Time) tableResult {
	var on, off, raw tableTimes
	for i := range *tableReps {
		end := warm.Add(time.Duration(i+1) * tableStep)
		plugin := func(ds backend.DataSourceInstanceSettings, rules bool) func() error {
			return func() error {
				a, err := b.fleet(ds, end)
				if err == nil {
					b.requireTable(t, a, rules)
				}
				return err
			}
		}
		runs := []func(){
			func() { b.timed(t, &on, plugin(b.on, true)) },
			func() { b.timed(t, &off, plugin(b.off, false)) },
			func() { b.timed(t, &raw, func() error { return b.rawFleet(exprs, end) }) },
		}
		for j := range runs {
			runs[(i+j)%len(runs)]()
		}
	}
	return tableResult{on: median(on.wall), off: median(off.wall), raw: median(raw.wall),
		evalOn: medianF(on.eval), evalOff: medianF(off.eval), evalRaw: medianF(raw.eval)}
}

// render prints the plain row first, as before the rules existed
// (docs/performance.md quotes it: the plugin, here with rules off,
// against raw HTTP), then the three ways with their ratios.
func (r tableResult) render(onExprs, offExprs int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "| fleet table, %d engines (%d instant expressions) | %s | %s | %.2fx |\n",
		*tableEngines, offExprs, ms(r.off), ms(r.raw), ratio(r.off, r.raw))
	s.WriteString("| fleet table with recording rules | rules on (plugin) | rules off (plugin) | raw HTTP, rules-off plan | on ÷ off | off ÷ raw | Prometheus eval: on / off / raw |\n")
	s.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&s, "| fleet table, %d engines, rules on / off (%d / %d instant expressions; medians of %d) | %s | %s | %s | %.2f× | %.2f× | %.3f s / %.3f s / %.3f s |\n",
		*tableEngines, onExprs, offExprs, *tableReps, ms(r.on), ms(r.off), ms(r.raw), ratio(r.on, r.off), ratio(r.off, r.raw), r.evalOn, r.evalOff, r.evalRaw)
	return s.String()
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }
