package fleetbench

import (
	"fmt"
	"testing"
	"time"
)

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
// sources of their own with incremental ranges off. It reports whether
// the rules answered; it never asserts a time.
func (b *tableBench) casesBench(t *testing.T) {
	e := *b.env
	e.step = rulesStep
	e.t0 = e.t0.Truncate(rulesStep)
	on, off := rulesDataSources(&e, "-table")
	var rows []rulesRow
	for _, c := range tableCases() {
		r := e.measureRules(t, c, on.ds, off.ds)
		t.Logf("%s: rules on %s (rules used %v), off %s, raw %s %s", r.name, ms(r.on), r.usedRules, ms(r.off), ms(r.raw), r.err)
		rows = append(rows, r)
	}
	fmt.Printf("\nsaturation and slo, %d engines (the fleet table's fleet), range %s ending by %s:\n", *tableEngines, *span, e.t0.UTC().Format(time.TimeOnly))
	fmt.Print(renderRules(rows, nil, 0))
	e.profileCases(t, on.ds)
}
