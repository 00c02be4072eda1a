package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestWaitTimeScoped: grouping by priority adds the label to the latency
// family's aggregations only (the live wait's waiting gauge has none), and
// a filter quotes each class, so "<-1" and ">1" match exactly those values.
func TestWaitTimeScoped(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		name  string
		scope models.PriorityScope
		want  string
	}{
		{"by priority", models.PriorityScope{ByPriority: true},
			`label_replace(histogram_quantile(0.99, sum by (le, instance, priority) (rate(vllm:request_queue_time_seconds_bucket[1m])))` +
				`, "vllm_signal", "p99", "", "") or label_replace(sum by (instance, priority) (rate(vllm:request_queue_time_seconds_sum[1m])) / ` +
				`sum by (instance, priority) (rate(vllm:request_queue_time_seconds_count[1m])), "vllm_signal", "mean", "", "")`},
		{"filtered", models.PriorityScope{Priorities: []string{"<-1", ">1"}},
			`label_replace(histogram_quantile(0.99, sum by (le, instance) (rate(vllm:request_queue_time_seconds_bucket{priority=~"<-1|>1"}[1m])))` +
				`, "vllm_signal", "p99", "", "") or label_replace(sum by (instance) (rate(vllm:request_queue_time_seconds_sum{priority=~"<-1|>1"}[1m])) / ` +
				`sum by (instance) (rate(vllm:request_queue_time_seconds_count{priority=~"<-1|>1"}[1m])), "vllm_signal", "mean", "", "")`},
		{"none", models.PriorityScope{}, b.WaitTime("queue_time", []float64{0.99}, false, models.GroupInstance, models.Filters{}, "1m")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := b.WaitTimeScoped("queue_time", []float64{0.99}, false, models.GroupInstance, models.Filters{}, tt.scope, "1m")
			require.Equal(t, tt.want, got)
			parse(t, got)
		})
	}
	live := b.WaitTimeScoped("queue_time", []float64{0.5}, true, models.GroupModel, models.Filters{},
		models.PriorityScope{ByPriority: true, Priorities: []string{"0"}}, "1m")
	require.Contains(t, live, `(sum by (model_name) (vllm:num_requests_waiting))`, "the waiting gauge has no priority label")
	require.Contains(t, live, `sum by (model_name, priority) (rate(vllm:request_queue_time_seconds_sum{priority=~"0"}[1m]))`)
}

// TestPriorityFilterMatchesExactly: each class's matcher, as Prometheus
// reads it, matches that class and no other.
func TestPriorityFilterMatchesExactly(t *testing.T) {
	for _, class := range models.PriorityClasses {
		f := priorityFilters(models.Filters{}, models.PriorityScope{Priorities: []string{class, "0"}})
		require.Len(t, f.Labels, 1)
		sel, ok := parse(t, `x{`+f.Labels[0].String()+`}`).(*parser.VectorSelector)
		require.True(t, ok)
		var m *labels.Matcher
		for _, s := range sel.LabelMatchers {
			if s.Name == PriorityLabelName {
				m = s
			}
		}
		require.NotNil(t, m)
		for _, other := range append(models.PriorityClasses, "-10", "2", "", "<-1|>1") {
			require.Equal(t, other == class || other == "0", m.Matches(other), "%s against %q", m, other)
		}
	}
	f := models.Filters{Labels: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "namespace", "a")}}
	scoped := priorityFilters(f, models.PriorityScope{Priorities: []string{"1"}})
	require.Len(t, f.Labels, 1, "the query's own filters are not changed")
	require.Len(t, scoped.Labels, 2)
}

// TestQueueByPriority: nothing without a scope; with one, the served rate
// and mean queue time per class from the queue-time histogram.
func TestQueueByPriority(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	require.Empty(t, b.QueueByPriority(models.GroupInstance, models.Filters{}, models.PriorityScope{}, "1m"))
	got := b.QueueByPriority(models.GroupModel, models.Filters{}, models.PriorityScope{ByPriority: true, Priorities: []string{">1"}}, "1m")
	count := `sum by (model_name, priority) (rate(vllm:request_queue_time_seconds_count{priority=~">1"}[1m]))`
	require.Equal(t, []SignalExpr{
		{QueueServedSignal, count},
		{QueueTimeMeanSignal, `sum by (model_name, priority) (rate(vllm:request_queue_time_seconds_sum{priority=~">1"}[1m])) / ` + count},
	}, got)
	for _, s := range got {
		parse(t, s.Expr)
	}
}

// TestSLOSignalsScoped: every series of an objective, availability
// included, is split and filtered by priority; without a scope it is
// SLOSignals.
func TestSLOSignalsScoped(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	o := Objective{Key: QueueTime, Bound: 1, Target: 0.99, Window: "28d"}
	require.Equal(t, b.SLOSignals(o, models.GroupModel, models.Filters{}),
		b.SLOSignalsScoped(o, models.GroupModel, models.Filters{}, models.PriorityScope{}))
	for _, obj := range []Objective{o, Availability(0.999, "28d")} {
		for _, s := range b.SLOSignalsScoped(obj, models.GroupModel, models.Filters{}, models.PriorityScope{ByPriority: true, Priorities: []string{"<-1"}}) {
			e := parse(t, s.Expr)
			n := 0
			parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
				switch x := node.(type) {
				case *parser.VectorSelector:
					n++
					require.Contains(t, x.String(), `priority=~"<-1"`, s.Name)
				case *parser.AggregateExpr:
					require.Contains(t, x.Grouping, "priority", s.Name)
				}
				return nil
			})
			require.Positive(t, n)
		}
	}
}

// TestWorkloadSignalsScoped: every tokens-view series is split and
// filtered by priority, and the endpoint picker's error share, which knows
// no vLLM priority, is left out.
func TestWorkloadSignalsScoped(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Gateway: true}
	require.Equal(t, b.WorkloadSignals(models.GroupModel, models.Filters{}, "1m"),
		b.WorkloadSignalsScoped(models.GroupModel, models.Filters{}, models.PriorityScope{}, "1m"))
	scoped := b.WorkloadSignalsScoped(models.GroupModel, models.Filters{}, models.PriorityScope{ByPriority: true, Priorities: []string{">1"}}, "1m")
	var names []string
	for _, s := range scoped {
		names = append(names, s.Name)
		parser.Inspect(parse(t, s.Expr), func(node parser.Node, _ []parser.Node) error {
			if v, ok := node.(*parser.VectorSelector); ok {
				require.Contains(t, v.String(), `priority=~">1"`, s.Name)
			}
			return nil
		})
	}
	require.Equal(t, []string{WorkloadPromptMean, WorkloadGenerationMean, WorkloadRequests, ErrorShare}, names)
}
