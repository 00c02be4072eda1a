package vllm

import (
	"sort"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// parse parses a generated expression and drops outer parentheses.
func parse(t *testing.T, expr string) parser.Expr {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	require.NoError(t, err, expr)
	return unparen(e)
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// metricNames lists the distinct metric names an expression selects.
func metricNames(t *testing.T, e parser.Expr) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, vs := range allSelectors(t, e.String()) {
		seen[vs.Name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestTopKRankingAggregations states what each aggregation means: max and
// avg take that function over a subquery of the rank signal spanning the
// whole range at the step; last ranks by the signal at the range end.
func TestTopKRankingAggregations(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rank, err := b.Rank("waiting", models.GroupInstance, models.Filters{}, "1m0s")
	require.NoError(t, err)
	rankExpr := parse(t, rank).String()
	tests := []struct {
		aggregation string
		function    string // "" for last: no function over time
	}{
		{aggregation: "max", function: "max_over_time"},
		{aggregation: "avg", function: "avg_over_time"},
		{aggregation: "last"},
	}
	for _, tt := range tests {
		t.Run(tt.aggregation, func(t *testing.T) {
			e, err := b.TopKRanking("waiting", tt.aggregation, 4, models.GroupInstance, models.Filters{}, "1m0s", "3600s", "15s")
			require.NoError(t, err)
			top, ok := parse(t, e).(*parser.AggregateExpr)
			require.True(t, ok, "a topk aggregation: %s", e)
			require.Equal(t, "topk", top.Op.String())
			require.Equal(t, "4", top.Param.String(), "k")
			inner := unparen(top.Expr)
			if tt.function == "" {
				require.Equal(t, rankExpr, inner.String(), "last ranks the signal itself, at the range end")
				return
			}
			call, ok := inner.(*parser.Call)
			require.True(t, ok, "a function over time: %s", inner)
			require.Equal(t, tt.function, call.Func.Name)
			require.Len(t, call.Args, 1)
			sub, ok := unparen(call.Args[0]).(*parser.SubqueryExpr)
			require.True(t, ok, "over a subquery: %s", call.Args[0])
			require.Equal(t, time.Hour, sub.Range, "the subquery spans the whole range")
			require.Equal(t, 15*time.Second, sub.Step, "at the query's step")
			require.Equal(t, rankExpr, unparen(sub.Expr).String(), "of the rank signal")
		})
	}
}

// TestRankSignals states what each rankBy ranks: the aggregation per group
// and the metrics it reads.
func TestRankSignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		rankBy   string
		top      string // aggregation operator or function at the top
		rate     bool   // the metrics are read through rate()
		quantile string
		names    []string
	}{
		{rankBy: "waiting", top: "sum", names: []string{"vllm:num_requests_waiting"}},
		{rankBy: "running", top: "sum", names: []string{"vllm:num_requests_running"}},
		{rankBy: "kv_usage", top: "avg", names: []string{"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}},
		{rankBy: "wait_p99", top: "histogram_quantile", quantile: "0.99", rate: true, names: []string{"vllm:request_queue_time_seconds_bucket"}},
		{rankBy: "preemption_rate", top: "sum", rate: true, names: []string{"vllm:num_preemptions_total"}},
	}
	require.Len(t, tests, len(models.RankSignals), "every rankBy has a case")
	for _, tt := range tests {
		t.Run(tt.rankBy, func(t *testing.T) {
			x, err := b.Rank(tt.rankBy, models.GroupInstance, models.Filters{}, "1m0s")
			require.NoError(t, err)
			e := parse(t, x)
			require.Equal(t, tt.names, metricNames(t, e))
			var by parser.Expr = e
			switch n := e.(type) {
			case *parser.AggregateExpr:
				require.Equal(t, tt.top, n.Op.String())
			case *parser.Call:
				require.Equal(t, tt.top, n.Func.Name)
				require.Equal(t, tt.quantile, n.Args[0].String())
				by = unparen(n.Args[1])
			default:
				t.Fatalf("unexpected top node %T: %s", e, x)
			}
			agg, ok := by.(*parser.AggregateExpr)
			require.True(t, ok, "grouped: %s", by)
			require.Contains(t, agg.Grouping, "instance", "one value per instance")
			require.Equal(t, tt.rate, hasCall(e, "rate"), "rate(): %s", x)
		})
	}
}

func hasCall(e parser.Expr, name string) bool {
	found := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if c, ok := n.(*parser.Call); ok && c.Func.Name == name {
			found = true
		}
		return nil
	})
	return found
}

// TestWaitTimeQuantiles: each requested quantile reaches histogram_quantile
// exactly as given, tagged with its name.
func TestWaitTimeQuantiles(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	e := parse(t, b.WaitTime("ttft", []float64{0.5, 0.99, 0.999}, false, models.GroupModel, models.Filters{}, "1m0s"))
	var got []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if c, ok := n.(*parser.Call); ok && c.Func.Name == "histogram_quantile" {
			got = append(got, c.Args[0].String())
		}
		return nil
	})
	require.Equal(t, []string{"0.5", "0.99", "0.999"}, got)
	for _, name := range []string{`"p50"`, `"p99"`, `"p99.9"`, `"mean"`} {
		require.Contains(t, e.String(), name)
	}
}

// TestPreemptionEventsSameStart: bursts that start together are ordered by
// instance, then engine.
func TestPreemptionEventsSameStart(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 10 * time.Second
	got := PreemptionEvents(series.Matrix{
		stream("preemptions", "b", "0", t0, step, 0, 1),
		stream("preemptions", "a", "1", t0, step, 0, 1),
		stream("preemptions", "a", "0", t0, step, 0, 1),
	}, "instance", step)
	var order []string
	for _, e := range got {
		order = append(order, e.Instance+"/"+e.Engine)
	}
	require.Equal(t, []string{"a/0", "a/1", "b/0"}, order)
}
