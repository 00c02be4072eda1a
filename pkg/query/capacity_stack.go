package query

// The capacity type's view of the stack's own autoscaler: llm-d's workload
// variant autoscaler's replicas, per group, beside the query's own count
// (pkg/vllm/capacity_stack.go says how variants are matched to groups).

import (
	"context"
	"fmt"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// stackAnswer is the stack autoscaler's decision per group key, the
// expressions asked, and what to say about it.
type stackAnswer struct {
	byGroup map[string]vllm.StackDecision
	exprs   []string
	notices []data.Notice
}

// stack reads the WVA's decision and matches it to the groups. A store
// without WVA series (most) answers nothing and says nothing; a failed
// lookup leaves the columns out with a notice rather than failing the query.
func (c capacityPlan) stack(ctx context.Context, gl []string) stackAnswer {
	desiredExpr, currentExpr := vllm.CapacityStackExprs()
	a := stackAnswer{exprs: []string{desiredExpr}}
	desired, _, err := c.memo.instantQuery(ctx, desiredExpr, c.timeRange.End, c.timeRange.Step)
	if err != nil || len(desired) == 0 {
		return a
	}
	podsExpr := c.builder.CapacityPods(c.query.Grouping, c.query.Filters)
	a.exprs = append(a.exprs, currentExpr, podsExpr)
	current, _, err := c.memo.instantQuery(ctx, currentExpr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		current = nil // the desired count stands without it
	}
	pods, _, err := c.memo.instantQuery(ctx, podsExpr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		a.notices = append(a.notices, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: "llm-d's autoscaler publishes replicas, but the vLLM pods to match them to could not be read: " + err.Error()})
		return a
	}
	key := func(m model.Metric) string { return capacityKey(metricLabels(m, gl), gl) }
	var unmatched []string
	a.byGroup, unmatched = vllm.MatchVariants(vllm.StackVariants(desired, current), pods, key)
	if len(unmatched) > 0 {
		a.notices = append(a.notices, data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
			"llm-d's autoscaler sizes %s, whose pods serve none of this query's servers (a variant is matched by its "+
				"Deployment's name prefixing its pods' names, in its namespace; the servers need namespace and pod labels).",
			strings.Join(unmatched, ", "))})
	}
	return a
}

// fileStack puts each group's stack decision in its row.
func (a stackAnswer) fileStack(rows []frames.CapacityRow, groups []vllm.CapacityGroup, gl []string) {
	for i, g := range groups {
		d, ok := a.byGroup[capacityKey(g.Labels, gl)]
		if !ok {
			continue
		}
		desired := d.Desired
		rows[i].StackDesired = &desired
		if d.HasCurrent {
			current := d.Current
			rows[i].StackCurrent = &current
		}
	}
}

// stackCounts are the groups' stack decisions as one-sample series, for
// the alertable format.
func stackCounts(groups []vllm.CapacityGroup, rows []frames.CapacityRow) []*series.Series {
	var out []*series.Series
	for i, g := range groups {
		if rows[i].StackDesired != nil {
			out = append(out, vllm.CapacityCount(g, "autoscaler_desired_replicas", *rows[i].StackDesired))
		}
	}
	return out
}

// metricLabels picks the named labels of a sample.
func metricLabels(m model.Metric, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = string(m[model.LabelName(n)])
	}
	return out
}
