package fleetbench

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// baselinePlugin is a plugin folder built from another commit (as
// grafanahost.Build lays it out), measured beside this tree's plugin on
// the same fleet: a before and after in one run.
var baselinePlugin = flag.String("bench.fleet.baseline", "", "a plugin folder from another commit to measure saturation and slo beside this tree's plugin")

// tableCases are the query types measured on the fleet table's fleet
// (which, unlike the rules bench's, has the TTFT histogram, finished
// requests by reason and generation tokens that saturation and slo read).
func tableCases() []benchCase {
	return []benchCase{
		{name: "saturation instance", query: `{"queryType":"saturation"}`},
		{name: "slo (defaults: TTFT ≤ 1 s)", query: `{"queryType":"slo"}`},
	}
}

// casesBench measures tableCases with recordingRules on, off, and the
// rules-off plan as raw HTTP, interleaved (measureRules), at the rules'
// 30 s step over -bench.span ending at the table's last instant, on data
// sources of their own with incremental ranges off; with a baseline
// plugin, both plugins rules on and off and raw HTTP (beside). It reports
// whether the rules answered; it never asserts a time.
func (b *tableBench) casesBench(t *testing.T) {
	e := *b.env
	e.step = rulesStep
	e.t0 = e.t0.Truncate(rulesStep)
	on, off := rulesDataSources(&e, "-table")
	if *baselinePlugin != "" {
		base := e
		base.launch(t, *baselinePlugin)
		fmt.Printf("\nsaturation and slo, %d engines, before (%s) and after (this tree), range %s ending by %s:\n\n",
			*tableEngines, *baselinePlugin, *span, e.t0.UTC().Format(time.TimeOnly))
		fmt.Print(besideHeader)
		for _, c := range tableCases() {
			fmt.Print(e.beside(t, &base, c, on.ds, off.ds).render(c.name))
		}
		e.rangeProfiles(t, on.ds, off.ds)
	} else {
		var rows []rulesRow
		for _, c := range tableCases() {
			r := e.measureRules(t, c, on.ds, off.ds)
			t.Logf("%s: rules on %s (rules used %v), off %s, raw %s %s", r.name, ms(r.on), r.usedRules, ms(r.off), ms(r.raw), r.err)
			rows = append(rows, r)
		}
		fmt.Printf("\nsaturation and slo, %d engines (the fleet table's fleet), range %s ending by %s:\n", *tableEngines, *span, e.t0.UTC().Format(time.TimeOnly))
		fmt.Print(renderRules(rows, nil, 0))
	}
	e.profileCases(t, on.ds, *tableAhead)
}

// besideRow is one case measured five ways: both plugins with rules on
// and off, and the rules-off plan as raw HTTP; medians, with Prometheus'
// evaluation seconds during each.
type besideRow struct {
	wall [5]time.Duration
	eval [5]float64
	// frames in the after plugin's and the before plugin's answers (rules on).
	framesAfter, framesBefore int
}

// besideHeader names besideRow's columns.
const besideHeader = "| case | before: rules on | before: rules off | after: rules on | after: rules off | raw HTTP, rules-off plan | after on ÷ raw | before on ÷ raw | frames before / after | Prometheus eval: before on / after on / raw |\n" +
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"

func (r besideRow) render(name string) string {
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %.2f× | %.2f× | %d / %d | %.2f s / %.2f s / %.2f s |\n", name,
		ms(r.wall[0]), ms(r.wall[1]), ms(r.wall[2]), ms(r.wall[3]), ms(r.wall[4]), ratio(r.wall[2], r.wall[4]), ratio(r.wall[0], r.wall[4]),
		r.framesBefore, r.framesAfter, r.eval[0], r.eval[2], r.eval[4])
}

// beside measures c on the baseline plugin (base) and this tree's (e),
// rules on and off, and the rules-off plan as raw HTTP, reps rounds in an
// order that rotates each round, each on a range one step later (nothing
// from either plugin's cache). It fails when a rules-on answer did not
// come from the rules or a rules-off one did.
func (e *env) beside(t *testing.T, base *env, c benchCase, on, off backend.DataSourceInstanceSettings) besideRow {
	warm := e.t0.Add(-time.Duration(*reps) * e.step)
	var row besideRow
	var exprs []string
	for _, p := range []*env{base, e} {
		_, err := p.queryOn(on, c, warm)
		requireNoError(t, err, c.name)
		dsOff := *p
		dsOff.ds = off
		exprs, err = dsOff.executed(c, warm)
		requireNoError(t, err, c.name)
	}
	walls := make([][]time.Duration, 5)
	evals := make([][]float64, 5)
	plugin := func(i int, p *env, ds backend.DataSourceInstanceSettings, rules bool, end time.Time) func() error {
		return func() error {
			dr, err := p.queryOn(ds, c, end)
			if err == nil && answeredFromRules(dr) != rules {
				err = fmt.Errorf("%s: rules notice %v, want %v", c.name, !rules, rules)
			}
			if rules && i == 0 {
				row.framesBefore = len(dr.Frames)
			} else if rules {
				row.framesAfter = len(dr.Frames)
			}
			return err
		}
	}
	for i := range *reps {
		end := warm.Add(time.Duration(i+1) * e.step)
		runs := []func() error{
			plugin(0, base, on, true, end), plugin(1, base, off, false, end),
			plugin(2, e, on, true, end), plugin(3, e, off, false, end),
			func() error { e.rawPlan(t, c, exprs, end); return nil },
		}
		for j := range runs {
			k := (i + j) % len(runs)
			ev := e.evalSeconds(t)
			start := time.Now()
			err := runs[k]()
			walls[k] = append(walls[k], time.Since(start))
			evals[k] = append(evals[k], e.evalSeconds(t)-ev)
			requireNoError(t, err, c.name)
		}
	}
	for k := range walls {
		row.wall[k], row.eval[k] = median(walls[k]), medianF(evals[k])
	}
	return row
}

func requireNoError(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// rangeProfiles prints where Prometheus' time goes in each case's plans,
// rules on and off: each range expression alone, with stats.
func (e *env) rangeProfiles(t *testing.T, on, off backend.DataSourceInstanceSettings) {
	end := e.t0.Add(-time.Duration(*reps) * e.step)
	for _, c := range tableCases() {
		for _, ds := range []struct {
			name string
			ds   backend.DataSourceInstanceSettings
		}{{"rules on", on}, {"rules off", off}} {
			p := *e
			p.ds = ds.ds
			exprs, err := p.executed(c, end)
			requireNoError(t, err, c.name)
			tb := &tableBench{env: e}
			costs := tb.profileRange(t, exprs, end, min(*reps, 2))
			fmt.Print(strings.Replace(renderProfile(c.name+", "+ds.name, costs), "each expression alone", "each range expression alone", 1))
		}
	}
}
