package fleetbench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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

// The defaults are the short version the test suite runs; scripts/bench.sh
// passes the full size.
var (
	engines  = flag.Int("bench.engines", 10, "vLLM engines in the backfilled fleet")
	span     = flag.Duration("bench.span", 10*time.Minute, "time range of each query (history written before now)")
	reps     = flag.Int("bench.reps", 2, "timed repetitions of each case, plugin and raw interleaved")
	callers  = flag.Int("bench.callers", 4, "concurrent callers in the load phase")
	loadFor  = flag.Duration("bench.load", 2*time.Second, "duration of the load phase")
	tableOut = flag.String("bench.out", "", "also write the result table to this file")
)

const step = 5 * time.Second

// TestFleetBench backfills a Prometheus, runs every case through the plugin
// and as raw HTTP, checks that both answer the same, and prints medians.
func TestFleetBench(t *testing.T) {
	env := setUp(t)
	var rows []row
	for _, c := range cases() {
		r := env.measure(t, c)
		t.Logf("%s: plugin %s, raw %s %s", r.name, ms(r.plugin), ms(r.raw), r.err)
		rows = append(rows, r)
	}
	// The crowd three times, each on its own data source instance (its own
	// cache): the result cache alone, then incremental ranges as users get
	// them, then with the overlap a scraping Prometheus allows.
	short := env.dsLoad
	short.UID, short.JSONData = "bench-load-1m", []byte(`{"scrapeInterval":"5s","queryTimeout":"4m","incrementalQueryOverlapWindow":"1m"}`)
	loads := []loadResult{
		env.load(t, "cache only (incrementalQuerying off)", env.ds),
		env.load(t, "cache and incremental ranges, overlap 10m (default)", env.dsLoad),
		env.load(t, "cache and incremental ranges, overlap 1m", short),
	}
	table := render(rows, loads, *engines, *span, env.heapStart)
	fmt.Println(table)
	if *tableOut != "" {
		require.NoError(t, os.WriteFile(*tableOut, []byte(table), 0o644))
	}
	// Failures are in the table first, so a long run still reports what it
	// measured; then they fail the test.
	for _, r := range rows {
		require.Empty(t, r.err, r.name)
	}
	for _, ld := range loads {
		require.Zero(t, ld.errors, "load phase %s: %d of %d calls failed; first: %s", ld.name, ld.errors, ld.calls, ld.firstErr)
	}
}

// env is a backfilled Prometheus and the plugin started as Grafana does.
type env struct {
	prom *promtest.Server
	host *grafanahost.Host
	// ds measures each case on a full fetch (incremental ranges off: the
	// shifted ranges would otherwise be answered from earlier ones); dsLoad
	// is a data source as users get it, for the load.
	ds, dsLoad backend.DataSourceInstanceSettings
	t0         time.Time // end of the measured ranges
	http       *http.Client
	// step is the queries' step (and, with the span, their maxDataPoints).
	step time.Duration
	// pprof is the plugin's profiling server (Grafana's
	// GF_PLUGIN_PROFILING_*), read for its heap after a collection;
	// heapStart is that heap right after the launch.
	pprof     string
	heapStart uint64
}

// fleetOptions size the backfilled history beyond the flags.
type fleetOptions struct {
	sample time.Duration // spacing of the written samples
	ahead  time.Duration // history written past t0, for ranges ending now later
	args   []string      // extra Prometheus flags
	// ownData puts the blocks in the data directory promtest made for the
	// server (Server.BackfillRules swaps that one for a snapshot).
	ownData bool
}

// startOnOwnData starts Prometheus on its own fresh data directory, then
// kills it, moves the backfilled blocks in and restarts it.
func startOnOwnData(t *testing.T, blocks string, args []string) *promtest.Server {
	p := promtest.Start(t, promtest.Options{ScrapeInterval: time.Hour, Args: args})
	p.Kill(t)
	entries, err := os.ReadDir(blocks)
	require.NoError(t, err)
	for _, en := range entries {
		if en.IsDir() && en.Name() != "wal" && en.Name() != "chunks_head" {
			require.NoError(t, os.Rename(filepath.Join(blocks, en.Name()), filepath.Join(p.Dir, "data", en.Name())))
		}
	}
	p.Restart(t)
	return p
}

func setUp(t *testing.T) *env {
	return setUpFleet(t, fleetOptions{sample: step, ahead: *loadFor + 15*time.Minute})
}

// setUpFleet backfills the fleet and starts Prometheus and the plugin.
func setUpFleet(t *testing.T, o fleetOptions) *env {
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package (scripts/test.sh installs it)")
	dir := t.TempDir()
	t0 := time.Now().Truncate(o.sample)
	// History up to t0, and on past it so ranges that end "now" during the
	// load still end inside the data.
	f := Fleet{Engines: *engines, Start: t0.Add(-*span - 10*time.Minute), End: t0.Add(o.ahead), Step: o.sample}
	om := filepath.Join(dir, "fleet.om")
	out, err := os.Create(om)
	require.NoError(t, err)
	require.NoError(t, WriteOpenMetrics(out, f))
	require.NoError(t, out.Close())
	data := filepath.Join(dir, "data")
	cmd := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool backfill: %s", b)
	require.NoError(t, os.Remove(om))

	e := &env{t0: t0, http: &http.Client{Timeout: 5 * time.Minute}, step: step}
	// Prometheus' own 2-minute limit is too short for the biggest cases on
	// a small shared machine; the bench reports slowness, it does not fail on it.
	args := append([]string{"--query.timeout=10m"}, o.args...)
	if o.ownData {
		e.prom = startOnOwnData(t, data, args)
	} else {
		e.prom = promtest.Start(t, promtest.Options{DataDir: data, ScrapeInterval: time.Hour, Args: args})
	}
	e.launch(t, grafanahost.Build(t))
	e.ds = backend.DataSourceInstanceSettings{UID: "bench", URL: e.prom.URL,
		JSONData: []byte(`{"scrapeInterval":"5s","queryTimeout":"4m","incrementalQuerying":false}`), Updated: time.Unix(1_700_000_000, 0)}
	e.dsLoad = e.ds
	e.dsLoad.UID, e.dsLoad.JSONData = "bench-load", []byte(`{"scrapeInterval":"5s","queryTimeout":"4m"}`)
	n := len(e.prom.Query(t, "count by (instance, engine) (vllm:num_requests_running)"))
	require.Equal(t, *engines, n, "backfilled engines visible in Prometheus")
	return e
}

// benchCase is one query type, and the raw plans that give the same answer.
type benchCase struct {
	name  string
	query string
	// alt, when set, is another raw plan for the same data (expressions
	// run concurrently), measured beside the plugin's own plan; the table
	// compares the plugin with the faster of the two.
	alt []string
	// topk: the plugin's plan is an instant ranking, then a range query.
	topk bool
	// points says whether plugin and raw must carry the same number of
	// points (false where the plugin turns series into something else).
	points bool
}

func cases() []benchCase {
	one := Instance(0)
	return []benchCase{
		{name: "promql waiting, every engine", query: `{"queryType":"promql","expr":"vllm:num_requests_waiting"}`, points: true},
		{name: "promql one series", query: fmt.Sprintf(`{"queryType":"promql","expr":"vllm:num_requests_waiting{instance=\"%s\",engine=\"0\"}"}`, one), points: true},
		{name: "queue instance_engine", query: `{"queryType":"queue","grouping":"instance_engine"}`, points: true, alt: []string{union("instance, engine")}},
		{name: "queue model", query: `{"queryType":"queue","grouping":"model"}`, points: true, alt: []string{union("model_name")}},
		{name: "waitTime instance", query: `{"queryType":"waitTime","grouping":"instance"}`, points: true},
		{name: "preemptions annotations", query: `{"queryType":"preemptions"}`},
		{name: "topk 5 waiting", query: `{"queryType":"topk","k":5,"rankBy":"waiting"}`, topk: true},
		// The what-if's CPU is the plugin's side of this ratio.
		{name: "capacity model", query: `{"queryType":"capacity","format":"table"}`},
	}
}

// union is the queue's former plan: one or-union of label_replace()s.
func union(by string) string {
	return fmt.Sprintf(`label_replace(sum by (%[1]s) (vllm:num_requests_running), "vllm_signal", "running", "", "") or `+
		`label_replace(sum by (%[1]s) (vllm:num_requests_waiting), "vllm_signal", "waiting", "", "")`, by)
}

// row is one measured case.
type row struct {
	name              string
	points            int
	plugin, raw, fast time.Duration
	err               string // the first failure, if any
}

// measure runs one case: a warm-up that learns the plugin's PromQL, then
// reps rounds of plugin and raw interleaved (alternating which goes
// first), each round on a range shifted by one step so no answer comes
// from the plugin's cache.
func (e *env) measure(t *testing.T, c benchCase) row {
	r := row{name: c.name}
	exprs, err := e.executed(c, e.t0)
	if err != nil {
		r.err = err.Error()
		return r
	}
	var pt, rt, ft []time.Duration
	for i := range *reps {
		end := e.t0.Add(-time.Duration(i+1) * e.step)
		plugin := func() {
			start := time.Now()
			n, err := e.pluginPoints(c, end)
			pt = append(pt, time.Since(start))
			if err != nil && r.err == "" {
				r.err = err.Error()
			}
			r.points = n
		}
		raw := func() {
			start := time.Now()
			bodies := e.rawPlan(t, c, exprs, end)
			rt = append(rt, time.Since(start))
			// Counted after the clock stops: decoding is the plugin's work,
			// not part of the least a client pays.
			if rawPoints := countPoints(t, bodies); c.points && rawPoints > 0 && r.err == "" {
				require.Equal(t, rawPoints, r.points, "%s: plugin and raw Prometheus disagree on the number of points", c.name)
			}
		}
		if i%2 == 0 {
			plugin()
			raw()
		} else {
			raw()
			plugin()
		}
		if len(c.alt) > 0 {
			start := time.Now()
			e.concurrent(t, c.alt, end)
			ft = append(ft, time.Since(start))
		}
	}
	r.plugin, r.raw, r.fast = median(pt), median(rt), median(ft)
	return r
}

func (e *env) dataQuery(c benchCase, ref string, end time.Time) backend.DataQuery {
	return backend.DataQuery{RefID: ref, QueryType: "", JSON: json.RawMessage(c.query), Interval: e.step,
		MaxDataPoints: int64(*span / e.step), TimeRange: backend.TimeRange{From: end.Add(-*span), To: end}}
}

// executed returns the PromQL the plugin ran for the case (from its
// ExecutedQueryString), one expression per line.
func (e *env) executed(c benchCase, end time.Time) ([]string, error) {
	dr, err := e.query(c, end)
	if err != nil {
		return nil, err
	}
	for _, f := range dr.Frames {
		if f.Meta != nil && f.Meta.ExecutedQueryString != "" {
			s := strings.TrimPrefix(f.Meta.ExecutedQueryString, "Expr: ")
			s = s[:strings.LastIndex(s, "\nStep: ")]
			return strings.Split(s, "\n"), nil
		}
	}
	return nil, fmt.Errorf("%s: no executed query in the plugin's answer", c.name)
}

// query runs the case through the plugin. The deadline is the data
// source's query timeout and more: a big fleet on a small machine can take
// longer than the minute the host tests allow.
func (e *env) query(c benchCase, end time.Time) (backend.DataResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := e.host.QueryDataErr(ctx, e.ds, nil, e.dataQuery(c, "A", end))
	if err != nil {
		return backend.DataResponse{}, fmt.Errorf("QueryData over gRPC: %w", err)
	}
	dr := resp.Responses["A"]
	return dr, dr.Error
}

func (e *env) pluginPoints(c benchCase, end time.Time) (int, error) {
	dr, err := e.query(c, end)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range dr.Frames {
		if len(f.Fields) == 2 && f.Fields[0].Name == "Time" {
			n += f.Rows()
		}
	}
	return n, nil
}

// rawPlan runs the plugin's PromQL over HTTP as the plugin does: its range
// queries concurrently, or (top-k) the instant ranking and then the range
// query. It returns the range answers' bodies, read whole.
func (e *env) rawPlan(t *testing.T, c benchCase, exprs []string, end time.Time) [][]byte {
	if c.topk {
		e.raw(t, "query", exprs[0], end)
		return [][]byte{e.raw(t, "query_range", exprs[1], end)}
	}
	return e.concurrent(t, exprs, end)
}

func (e *env) concurrent(t *testing.T, exprs []string, end time.Time) [][]byte {
	var wg sync.WaitGroup
	bodies := make([][]byte, len(exprs))
	for i, x := range exprs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies[i] = e.raw(t, "query_range", x, end)
		}()
	}
	wg.Wait()
	return bodies
}

// raw posts one query and reads the whole answer, the least any client pays.
func (e *env) raw(t *testing.T, endpoint, expr string, end time.Time) []byte {
	form := url.Values{"query": {expr}}
	if endpoint == "query" {
		form.Set("time", strconv.FormatInt(end.Unix(), 10))
	} else {
		form.Set("start", strconv.FormatInt(end.Add(-*span).Unix(), 10))
		form.Set("end", strconv.FormatInt(end.Unix(), 10))
		form.Set("step", strconv.FormatFloat(e.step.Seconds(), 'f', -1, 64))
	}
	resp, err := e.http.PostForm(e.prom.URL+"/api/v1/"+endpoint, form)
	if err != nil {
		t.Errorf("raw %s: %v", endpoint, err)
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("raw %s %q: HTTP %d %v %.200s", endpoint, expr, resp.StatusCode, err, body)
		return nil
	}
	return body
}

// countPoints decodes range answers and counts their points.
func countPoints(t *testing.T, bodies [][]byte) int {
	n := 0
	for _, body := range bodies {
		if body == nil {
			continue
		}
		var r struct {
			Data struct {
				Result []struct {
					Values [][2]any `json:"values"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Errorf("raw answer: decode: %v", err)
			return 0
		}
		for _, s := range r.Data.Result {
			n += len(s.Values)
		}
	}
	return n
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// readCounter reads one sample from Prometheus' own /metrics.
func (e *env) readCounter(t *testing.T, name string) float64 {
	resp, err := e.http.Get(e.prom.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, name+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, name)), 64)
			require.NoError(t, err)
			return v
		}
	}
	t.Fatalf("%s not in Prometheus' /metrics", name)
	return 0
}
