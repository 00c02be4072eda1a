//go:build !mutation

package query_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// capacityRulesFile is the shipped autoscaler rule file.
const capacityRulesFile = "../../deploy/prometheus/rules/vllm-capacity.rules.yml"

// capacityRuleExprs reads the capacity rule file and writes each rule's
// expression with every recorded series it reads replaced by that rule's
// own expression (a range over one becomes a subquery at the given
// resolution), so a store evaluates the chain in one instant query.
func capacityRuleExprs(t *testing.T, resolution time.Duration) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(capacityRulesFile)
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Rules []struct{ Record, Expr string }
		}
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))
	exprs := map[string]string{}
	var order []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			exprs[r.Record] = strings.TrimSpace(r.Expr)
			order = append(order, r.Record)
		}
	}
	require.NotEmpty(t, order)
	for _, name := range order { // each rule reads only those before it
		for _, dep := range order {
			if dep == name {
				break
			}
			ranged := regexp.MustCompile(regexp.QuoteMeta(dep) + `\[([0-9a-z]+)\]`)
			e := ranged.ReplaceAllString(exprs[name], "("+exprs[dep]+")[${1}:"+model.Duration(resolution).String()+"]")
			exprs[name] = strings.ReplaceAll(e, dep, "("+exprs[dep]+")")
		}
	}
	return exprs
}

// checkCapacityRules: on this store, the desired-replicas rule's count per
// model equals the capacity query's closed form (vllm.DesiredReplicas at
// its defaults: 20% headroom, a 5m drain) of the rule's own inputs as the
// same store evaluates them, within 1e-9, for every model the rule sizes.
func checkCapacityRules(t *testing.T, c *prom.Client, at time.Time) {
	exprs := capacityRuleExprs(t, ruleTestEvery)
	query := func(expr string) map[string]float64 {
		v, _, err := c.Query(context.Background(), expr, at)
		require.NoError(t, err, expr)
		out := map[string]float64{}
		for _, s := range v {
			out[fmt.Sprintf("%s/%s/%s", s.Metric["cluster"], s.Metric["namespace"], s.Metric["model_name"])] = float64(s.Value)
		}
		return out
	}
	// The history is about 150 s long, so the saturation filter's 5m window
	// reaches back to the first scrapes, before the hot engine's queue built
	// up (whether one of them saw it empty varies from run to run). Its
	// window is shortened to the minute in which the queue stands for sure;
	// what is checked here, the count against its inputs, does not depend
	// on it (the window itself is pinned by vllm-capacity.rules.test.yml).
	for name, e := range exprs {
		exprs[name] = strings.ReplaceAll(e, "min_over_time(vllm:num_requests_waiting[5m])", "min_over_time(vllm:num_requests_waiting[1m])")
	}
	require.Contains(t, exprs["model:vllm_desired_replicas:ceil"], "min_over_time(vllm:num_requests_waiting[1m])",
		"the rule file's saturation filter is the one shortened here")
	desired := query(exprs["model:vllm_desired_replicas:ceil"])
	arrivals := query(exprs["model:vllm_request_arrivals:rate5m"])
	capacity := query(exprs["model:vllm_replica_capacity:avg1d"])
	waiting := query("sum by (cluster, namespace, model_name) (vllm:num_requests_waiting)")
	require.NotEmpty(t, desired, "the hot fleet saturates some model: the rule sizes it")
	for k, d := range desired {
		want := vllm.DesiredReplicas(arrivals[k], waiting[k], capacity[k], 0.2, 5*time.Minute)
		t.Logf("%s: rule %v, closed form %d (arrivals %.4f, waiting %v, capacity %.4f)", k, d, want, arrivals[k], waiting[k], capacity[k])
		require.InDelta(t, float64(want), d, 1e-9, "%s", k)
		require.False(t, math.IsNaN(d))
	}
}
