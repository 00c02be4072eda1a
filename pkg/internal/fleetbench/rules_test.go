package fleetbench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"
)

// The rules bench's timing: the backfill is written at the data source's
// scrape interval, and the queries' step is the rules' evaluation interval,
// so $__rate_interval is max(30s+15s, 4×15s) = 1m, a window the rules
// record, and every step is a multiple of the interval.
const (
	rulesSample = 15 * time.Second
	rulesStep   = 30 * time.Second
)

// rulesNotice is how an answer says it was read from recording rules.
const rulesNotice = "Answered from recording rules"

func rulesCases() []benchCase {
	return []benchCase{
		{name: "waitTime instance (p50/p90/p99)", query: `{"queryType":"waitTime","grouping":"instance"}`, points: true},
		{name: "waitTime instance_engine (p50/p99)", query: `{"queryType":"waitTime","quantiles":[0.5,0.99],"grouping":"instance_engine"}`, points: true},
		{name: "waitTime model (p50/p90/p99)", query: `{"queryType":"waitTime","grouping":"model"}`, points: true},
		{name: "waitTime none (p50/p90/p99)", query: `{"queryType":"waitTime","grouping":"none"}`, points: true},
		{name: "queue model", query: `{"queryType":"queue","grouping":"model"}`, points: true},
		{name: "topk 5 by wait_p99", query: `{"queryType":"topk","k":5,"rankBy":"wait_p99"}`, topk: true},
	}
}

// rulesRow is one case measured three ways.
type rulesRow struct {
	name                string
	pointsOn, pointsOff int
	usedRules           bool // every rules-on run carried the notice
	offUsedRules        bool // some rules-off run carried it (a bug)
	on, off, raw        time.Duration
	// rawOn is the rules-on plan's PromQL as raw HTTP: the store's floor
	// for the plugin on rules (zero for topk, whose plan is two-phase).
	rawOn time.Duration
	// Prometheus' own evaluation seconds per run (medians), from
	// prometheus_engine_query_duration_seconds_sum{slice="inner_eval"}.
	evalOn, evalOff, evalRaw, evalRawOn float64
	err                                 string
}

// TestRulesBench backfills the fleet and the shipped recording rules'
// series over it, then measures each rules-capable query type three ways,
// interleaved: the plugin with recordingRules on, with it off, and the
// rules-off plan's PromQL as raw HTTP; then the dashboard crowd with rules
// on and off. It fails when the rules-on plugin did not answer from the
// rules, never on a timing.
func TestRulesBench(t *testing.T) {
	e := setUpFleet(t, fleetOptions{sample: rulesSample, ahead: 4**loadFor + 30*time.Minute,
		args: []string{"--web.enable-admin-api"}, ownData: true})
	e.step = rulesStep
	e.t0 = e.t0.Truncate(rulesStep)
	fleetStart := e.t0.Add(-*span - 10*time.Minute)
	BackfillRules(t, e.prom, fleetStart, e.t0.Add(4**loadFor+30*time.Minute), *engines)

	on, off := rulesDataSources(e, "")
	var rows []rulesRow
	for _, c := range rulesCases() {
		r := e.measureRules(t, c, on.ds, off.ds)
		t.Logf("%s: rules on %s (rules used %v), off %s, raw %s %s", r.name, ms(r.on), r.usedRules, ms(r.off), ms(r.raw), r.err)
		rows = append(rows, r)
	}
	// The crowd four times, on, off, off, on, each on a fresh data source
	// instance (its own cache): the order evens out what the process and
	// the machine carry from one crowd to the next.
	on2, off2 := rulesDataSources(e, "-2")
	loads := []loadResult{
		e.load(t, "recording rules on (1st)", on.load),
		e.load(t, "recording rules off (1st)", off.load),
		e.load(t, "recording rules off (2nd)", off2.load),
		e.load(t, "recording rules on (2nd)", on2.load),
	}
	table := renderRules(rows, loads, e.heapStart)
	fmt.Println(table)
	if *tableOut != "" {
		require.NoError(t, os.WriteFile(strings.TrimSuffix(*tableOut, ".md")+"-rules.md", []byte(table), 0o644))
	}
	for _, r := range rows {
		require.Empty(t, r.err, r.name)
		require.True(t, r.usedRules, "%s: the rules-on plugin did not answer from the recording rules", r.name)
		require.False(t, r.offUsedRules, "%s: the rules-off plugin answered from the recording rules", r.name)
	}
	for _, ld := range loads {
		require.Zero(t, ld.errors, "load phase %s: %d of %d calls failed; first: %s", ld.name, ld.errors, ld.calls, ld.firstErr)
	}
}

// dsPair is one setting's data source for the cases (full fetches) and
// for the crowd (as users get it).
type dsPair struct {
	ds, load backend.DataSourceInstanceSettings
}

// rulesDataSources are the rules-on and rules-off data sources; suffix
// makes their UIDs (so their instances) new.
func rulesDataSources(e *env, suffix string) (on, off dsPair) {
	mk := func(uid, extra string) backend.DataSourceInstanceSettings {
		return backend.DataSourceInstanceSettings{UID: uid + suffix, URL: e.prom.URL, Updated: time.Unix(1_700_000_000, 0),
			JSONData: []byte(`{"scrapeInterval":"15s","queryTimeout":"4m"` + extra + `}`)}
	}
	on = dsPair{mk("rules-on", `,"incrementalQuerying":false`), mk("rules-on-load", "")}
	off = dsPair{mk("rules-off", `,"incrementalQuerying":false,"recordingRules":false`), mk("rules-off-load", `,"recordingRules":false`)}
	return on, off
}

// measureRules runs one case: a warm-up of each data source (the rules
// discovery and coverage check, and each plan's PromQL), then reps rounds
// of rules on, rules off and raw HTTP of each plan, in an order that
// rotates each round, each round on a range one step later than the last
// (as time moves on a dashboard: the plugin checks that the rules cover a
// range's start once, for the earliest start it has seen).
func (e *env) measureRules(t *testing.T, c benchCase, on, off backend.DataSourceInstanceSettings) rulesRow {
	r := rulesRow{name: c.name, usedRules: true}
	fail := func(err error) {
		if err != nil && r.err == "" {
			r.err = err.Error()
		}
	}
	warm := e.t0.Add(-time.Duration(*reps) * e.step)
	if _, err := e.queryOn(on, c, warm); err != nil {
		fail(err)
		return r
	}
	dsOff := *e
	dsOff.ds = off
	exprs, err := dsOff.executed(c, warm)
	if err != nil {
		fail(err)
		return r
	}
	var exprsOn []string
	if !c.topk {
		dsOn := *e
		dsOn.ds = on
		if exprsOn, err = dsOn.executed(c, warm); err != nil {
			fail(err)
			return r
		}
	}
	var ton, toff, traw, trawOn []time.Duration
	var eon, eoff, eraw, erawOn []float64
	for i := range *reps {
		end := warm.Add(time.Duration(i+1) * e.step)
		plugin := func(ds backend.DataSourceInstanceSettings, times *[]time.Duration, evals *[]float64, rulesOn bool) {
			ev := e.evalSeconds(t)
			start := time.Now()
			dr, err := e.queryOn(ds, c, end)
			*times = append(*times, time.Since(start))
			*evals = append(*evals, e.evalSeconds(t)-ev)
			fail(err)
			used := answeredFromRules(dr)
			if rulesOn {
				r.usedRules = r.usedRules && used
				r.pointsOn = framePoints(dr)
			} else {
				r.offUsedRules = r.offUsedRules || used
				r.pointsOff = framePoints(dr)
			}
		}
		raw := func() {
			ev := e.evalSeconds(t)
			start := time.Now()
			bodies := e.rawPlan(t, c, exprs, end)
			traw = append(traw, time.Since(start))
			eraw = append(eraw, e.evalSeconds(t)-ev)
			if n := countPoints(t, bodies); c.points && n > 0 && r.pointsOff > 0 && n != r.pointsOff {
				fail(fmt.Errorf("rules-off plugin and raw Prometheus disagree on the number of points: %d and %d", r.pointsOff, n))
			}
		}
		rawOn := func() {
			ev := e.evalSeconds(t)
			start := time.Now()
			e.rawPlan(t, c, exprsOn, end)
			trawOn = append(trawOn, time.Since(start))
			erawOn = append(erawOn, e.evalSeconds(t)-ev)
		}
		runs := []func(){
			func() { plugin(on, &ton, &eon, true) },
			func() { plugin(off, &toff, &eoff, false) },
			raw,
		}
		if exprsOn != nil {
			runs = append(runs, rawOn)
		}
		for j := range runs {
			runs[(i+j)%len(runs)]()
		}
	}
	r.on, r.off, r.raw = median(ton), median(toff), median(traw)
	r.evalOn, r.evalOff, r.evalRaw = medianF(eon), medianF(eoff), medianF(eraw)
	if len(trawOn) > 0 {
		r.rawOn, r.evalRawOn = median(trawOn), medianF(erawOn)
	}
	return r
}

// queryOn runs the case through the plugin on one data source.
func (e *env) queryOn(ds backend.DataSourceInstanceSettings, c benchCase, end time.Time) (backend.DataResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := e.host.QueryDataErr(ctx, ds, nil, e.dataQuery(c, "A", end))
	if err != nil {
		return backend.DataResponse{}, fmt.Errorf("QueryData over gRPC: %w", err)
	}
	dr := resp.Responses["A"]
	return dr, dr.Error
}

// answeredFromRules reports whether any frame carries the rules notice.
func answeredFromRules(dr backend.DataResponse) bool {
	for _, f := range dr.Frames {
		if f.Meta == nil {
			continue
		}
		for _, n := range f.Meta.Notices {
			if strings.HasPrefix(n.Text, rulesNotice) {
				return true
			}
		}
	}
	return false
}

// framePoints counts the points of the answer's time series frames.
func framePoints(dr backend.DataResponse) int {
	n := 0
	for _, f := range dr.Frames {
		if len(f.Fields) == 2 && f.Fields[0].Name == "Time" {
			n += f.Rows()
		}
	}
	return n
}

// evalSeconds is Prometheus' running total of query evaluation seconds.
func (e *env) evalSeconds(t *testing.T) float64 {
	return e.readCounter(t, `prometheus_engine_query_duration_seconds_sum{slice="inner_eval"}`)
}

func medianF(vs []float64) float64 {
	ds := make([]time.Duration, len(vs))
	for i, v := range vs {
		ds[i] = time.Duration(v * float64(time.Second))
	}
	return median(ds).Seconds()
}

// renderRules prints the cases' table and the crowd's.
func renderRules(rows []rulesRow, loads []loadResult, heapStart uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d engines, range %s at step %s (scrape interval 15s, so $__rate_interval 1m), recording rules every 30s; medians of %d interleaved runs\n\n",
		*engines, *span, rulesStep, *reps)
	b.WriteString("| case | points on / off | rules used | rules on (plugin) | rules off (plugin) | raw HTTP, rules-off plan | raw HTTP, rules-on plan | on ÷ off | Prometheus eval: on / off / raw / raw on |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if r.err != "" && r.on == 0 {
			fmt.Fprintf(&b, "| %s | — | — | failed: %.120s | | | | | |\n", r.name, r.err)
			continue
		}
		used := "yes"
		if !r.usedRules {
			used = "**NO**"
		}
		if r.offUsedRules {
			used += " (also with rules off: bug)"
		}
		name := r.name
		if r.err != "" {
			name += fmt.Sprintf(" (a run failed: %.80s)", r.err)
		}
		rawOn, evalRawOn := "—", "—"
		if r.rawOn > 0 {
			rawOn, evalRawOn = ms(r.rawOn), fmt.Sprintf("%.2f s", r.evalRawOn)
		}
		fmt.Fprintf(&b, "| %s | %d / %d | %s | %s | %s | %s | %s | %.2f× | %.2f s / %.2f s / %.2f s / %s |\n", name, r.pointsOn, r.pointsOff, used,
			ms(r.on), ms(r.off), ms(r.raw), rawOn, float64(r.on)/float64(max(r.off, 1)), r.evalOn, r.evalOff, r.evalRaw, evalRawOn)
	}
	if len(loads) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\nload: %d callers × %s, one dashboard of %d panels (%d distinct PromQL expressions with rules on) per call, ranges ending now, step %s, incremental ranges on (defaults)\n\n",
		*callers, *loadFor, len(dashboard), loads[0].distinct, rulesStep)
	b.WriteString("| data source | calls | errors | p50 | p99 | first refresh p99 (each caller's first call) | p99 after each caller's first call | Prometheus executions | Prometheus eval time | " + memoryHeader + " |\n|---|---:|---:|---:|---:|---:|---:|---:|---:" + strings.Repeat("|---:", memoryColumns) + "|\n")
	for _, ld := range loads {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %.0f | %.1f s | %s |\n", ld.name, ld.calls, ld.errors, ms(ld.p50), ms(ld.p99), ms(ld.p99First), ms(ld.p99Warm), ld.executions, ld.evalSeconds, memoryCells(ld, heapStart))
	}
	return b.String()
}
