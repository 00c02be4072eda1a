//go:build !mutation

package query_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
)

// checkFleetMix: the fleet table is one instant, its range's end, so a
// table whose range starts before the rules began (first) but ends after
// it reads the recorded signals: it passes checkFleet (each recorded
// signal equals its raw twin at the rules' latest evaluation) and equals
// the table asked over a range the rules cover, cell by cell (within a
// relative tol). A table that ends before the rules began is raw: the
// rules-off table, exactly.
func checkFleetMix(t *testing.T, url string, from, first, to time.Time, tol float64) {
	t.Run("ends after the rules began", func(t *testing.T) {
		checkFleetWith(t, url, "", from, to)
		q, qAll := dq("A", `{"queryType":"fleet"}`, from, to), dq("A", `{"queryType":"fleet"}`, first.Add(20*time.Second), to)
		q.Interval, qAll.Interval = 15*time.Second, 15*time.Second
		on := settingsExecutor(t, url, `{"scrapeInterval":"15s"}`)
		mixed, all := run(t, on, q).Responses["A"], run(t, on, qAll).Responses["A"]
		require.NoError(t, mixed.Error)
		require.NoError(t, all.Error)
		require.Equal(t, withoutRange(expressions(all.Frames)[1:]), withoutRange(expressions(mixed.Frames)[1:]),
			"the same recorded and raw instants (seen and the scrape's up changes read the range)")
		requireSameTable(t, all.Frames[0], mixed.Frames[0], tol)
	})
	t.Run("ends before the rules began", func(t *testing.T) {
		q := dq("A", `{"queryType":"fleet"}`, from, first.Add(-30*time.Second))
		q.Interval = 15 * time.Second
		on := run(t, settingsExecutor(t, url, `{"scrapeInterval":"15s"}`), q).Responses["A"]
		off := run(t, settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false}`), q).Responses["A"]
		require.NoError(t, on.Error)
		require.NoError(t, off.Error)
		require.NotContains(t, executed(on.Frames), "engine:", "raw before the rules")
		require.NotContains(t, noticeTexts(on.Frames), "recording rules")
		require.Equal(t, executed(off.Frames), executed(on.Frames))
		requireSameTable(t, off.Frames[0], on.Frames[0], 0)
	})
}

// withoutRange drops the fleet's expressions whose window is the query's
// range (the changes of up behind the flapping state), which differ
// between two ranges by design.
func withoutRange(exprs []string) []string {
	var out []string
	for _, e := range exprs {
		if !strings.Contains(e, "(changes(up[") {
			out = append(out, e)
		}
	}
	return out
}

// requireSameTable: the same columns and rows, numbers within a relative
// tol (NaN where NaN, null where null), everything else equal.
func requireSameTable(t *testing.T, want, got *data.Frame, tol float64) {
	t.Helper()
	require.Equal(t, want.Rows(), got.Rows(), "rows")
	require.Positive(t, want.Rows())
	require.Len(t, got.Fields, len(want.Fields))
	for j, wf := range want.Fields {
		gf := got.Fields[j]
		require.Equal(t, wf.Name, gf.Name)
		for i := range wf.Len() {
			w, wok := wf.ConcreteAt(i)
			g, gok := gf.ConcreteAt(i)
			require.Equal(t, wok, gok, "%s row %d: null in one table only", wf.Name, i)
			wv, wIsFloat := w.(float64)
			gv, gIsFloat := g.(float64)
			if !wIsFloat || !gIsFloat {
				require.Equal(t, w, g, "%s row %d", wf.Name, i)
				continue
			}
			same := wv == gv || (math.IsNaN(wv) && math.IsNaN(gv)) || math.Abs(gv-wv) <= tol*math.Abs(wv)
			require.True(t, same, "%s row %d: %v, want %v", wf.Name, i, gv, wv)
		}
	}
}
