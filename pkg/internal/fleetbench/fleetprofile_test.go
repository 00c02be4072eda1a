package fleetbench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// exprCost is what one instant expression costs Prometheus when it runs
// alone: the wall time of the HTTP call and Prometheus' own figures from
// the API's stats (evaluation time and the samples it read).
type exprCost struct {
	expr    string
	wall    time.Duration
	eval    float64 // stats.timings.evalTotalTime, seconds
	samples int64   // stats.samples.totalQueryableSamples
}

// queryStats is the part of /api/v1/query's answer with stats=all that
// the profile reads (Prometheus 2.x and 3.x spell it the same).
type queryStats struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		Stats struct {
			Timings struct {
				EvalTotalTime float64 `json:"evalTotalTime"`
			} `json:"timings"`
			Samples struct {
				TotalQueryableSamples int64 `json:"totalQueryableSamples"`
			} `json:"samples"`
		} `json:"stats"`
	} `json:"data"`
}

// profile runs each expression alone, one after another, reps times at
// end, and keeps each one's median wall time, evaluation time and
// samples, most expensive first: where the table's time goes when
// nothing else competes for Prometheus.
func (b *tableBench) profile(t *testing.T, exprs []string, end time.Time, reps int) []exprCost {
	return b.profileWith(t, exprs, reps, func(x string) (queryStats, error) { return b.instantStats(x, end) })
}

// profileRange is profile for range expressions over -bench.span ending
// at end, at the env's step.
func (b *tableBench) profileRange(t *testing.T, exprs []string, end time.Time, reps int) []exprCost {
	return b.profileWith(t, exprs, reps, func(x string) (queryStats, error) {
		return b.stats("query_range", url.Values{"query": {x}, "start": {strconv.FormatInt(end.Add(-*span).Unix(), 10)},
			"end": {strconv.FormatInt(end.Unix(), 10)}, "step": {strconv.FormatFloat(b.step.Seconds(), 'f', -1, 64)}, "stats": {"all"}})
	})
}

// profileWith runs each expression alone through run, reps times.
func (b *tableBench) profileWith(t *testing.T, exprs []string, reps int, run func(string) (queryStats, error)) []exprCost {
	out := make([]exprCost, 0, len(exprs))
	for _, x := range exprs {
		var walls []time.Duration
		var evals []float64
		var samples int64
		for range reps {
			start := time.Now()
			st, err := run(x)
			require.NoError(t, err, x)
			walls = append(walls, time.Since(start))
			evals = append(evals, st.Data.Stats.Timings.EvalTotalTime)
			samples = st.Data.Stats.Samples.TotalQueryableSamples
		}
		out = append(out, exprCost{expr: x, wall: median(walls), eval: medianF(evals), samples: samples})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].eval > out[j].eval })
	return out
}

// instantStats sends one instant query with stats=all and decodes the
// stats; an answer that is not a success is an error.
func (b *tableBench) instantStats(expr string, end time.Time) (queryStats, error) {
	return b.stats("query", url.Values{"query": {expr}, "time": {strconv.FormatInt(end.Unix(), 10)}, "stats": {"all"}})
}

// stats sends one query to the API's endpoint and decodes its stats.
func (b *tableBench) stats(endpoint string, form url.Values) (queryStats, error) {
	var st queryStats
	resp, err := b.http.PostForm(b.prom.URL+"/api/v1/"+endpoint, form)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("HTTP %d, undecodable answer: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || st.Status != "success" {
		return st, fmt.Errorf("HTTP %d: %s", resp.StatusCode, st.Error)
	}
	return st, nil
}

// renderProfile prints a plan's expressions by cost, with each one's share
// of the plan's summed evaluation time.
func renderProfile(name string, costs []exprCost) string {
	total := 0.0
	for _, c := range costs {
		total += c.eval
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n%s, %d engines: each expression alone, most expensive first (sum of evaluations %.3f s)\n\n", name, *tableEngines, total)
	s.WriteString("| expression | wall | Prometheus eval | share | samples read |\n|---|---:|---:|---:|---:|\n")
	for _, c := range costs {
		fmt.Fprintf(&s, "| `%s` | %s | %.3f s | %.0f%% | %d |\n", shorten(c.expr, 110), ms(c.wall), c.eval, 100*c.eval/max(total, 1e-9), c.samples)
	}
	return s.String()
}

// shorten keeps an expression's head and tail, for a table cell.
func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if len(s) <= n {
		return s
	}
	return s[:n/2] + " … " + s[len(s)-n/2:]
}
