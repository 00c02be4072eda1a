package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

var nastyValues = []string{
	`meta-llama/Llama-3.1-8B-Instruct`,
	`a"b`, `a\b`, `a\"b`, `.*`, `a|b`, `(x)`, `[abc]`, `^$`, `}`, `{`, `"} or vector(1) #`,
	`\n`, "tab\there", "new\nline", `ünïcödé`, `127.0.0.1:8000`, `a+b?c`,
}

// allSelectors collects every vector selector of an expression.
func allSelectors(t *testing.T, expr string) []*parser.VectorSelector {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	require.NoError(t, err, "generated PromQL must parse: %s", expr)
	var out []*parser.VectorSelector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

// requireMatchesExactly checks that the matcher for label accepts each
// value and rejects near misses, so no value changed the query's meaning.
func requireMatchesExactly(t *testing.T, vs *parser.VectorSelector, label string, values []string) {
	t.Helper()
	var m *labels.Matcher
	for _, lm := range vs.LabelMatchers {
		if lm.Name == label {
			m = lm
		}
	}
	require.NotNil(t, m, "selector %s has no %s matcher", vs, label)
	for _, v := range values {
		require.True(t, m.Matches(v), "%s must match %q", m, v)
		require.False(t, m.Matches(v+"x"), "%s must not match %q", m, v+"x")
		require.False(t, m.Matches("x"+v), "%s must not match %q", m, "x"+v)
	}
	require.False(t, m.Matches(""), "%s must not match the empty value", m)
}

func builders() map[string]Builder {
	v1 := Detect([]string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds_bucket"}, "vllm:")
	v0 := Detect([]string{"vllm:num_requests_running", "vllm:gpu_cache_usage_perc", "vllm:num_requests_swapped", "vllm:time_per_output_token_seconds_bucket"}, "vllm:")
	return map[string]Builder{
		"undetected": {Prefix: "vllm:", InstanceLabel: "instance"},
		"v1":         {Prefix: "vllm:", InstanceLabel: "instance", Detected: v1},
		"v0":         {Prefix: "vllm:", InstanceLabel: "instance", Detected: v0},
		"ray pod":    {Prefix: "ray_vllm:", InstanceLabel: "pod"},
	}
}

// expressions builds one of every expression a builder can write.
func expressions(t *testing.T, b Builder, g models.Grouping, f models.Filters) map[string]string {
	t.Helper()
	out := map[string]string{
		"queue":           b.Queue(g, f),
		"waitTime":        b.WaitTime("itl", []float64{0.5, 0.999}, true, g, f, "1m0s"),
		"preemptions":     b.Preemptions(f),
		"preemption rate": b.PreemptionRate(g, f, "2m15s"),
	}
	for _, rank := range models.RankSignals {
		for _, a := range models.Aggregations {
			e, err := b.TopKRanking(rank, a, 3, g, f, "1m0s", "3600s", "15s")
			require.NoError(t, err)
			out["rank "+rank+" "+a] = e
		}
		e, err := b.TopKSeries(rank, g, f, "1m0s", []string{"a", `b"c`})
		require.NoError(t, err)
		out["series "+rank] = e
	}
	return out
}

func TestEveryExpressionParsesAndEscapes(t *testing.T) {
	groupings := []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine}
	for bname, b := range builders() {
		for _, g := range groupings {
			for _, v := range nastyValues {
				f := models.Filters{Models: []string{v}, Instances: []string{v, "other"}, Engines: []string{"0"}}
				for ename, expr := range expressions(t, b, g, f) {
					t.Run(bname+"/"+string(g)+"/"+ename+"/"+v, func(t *testing.T) {
						sels := allSelectors(t, expr)
						require.NotEmpty(t, sels)
						for _, vs := range sels {
							require.Contains(t, vs.Name, b.Prefix)
							requireMatchesExactly(t, vs, "model_name", []string{v})
							if !strings.HasPrefix(ename, "series") {
								requireMatchesExactly(t, vs, b.InstanceLabel, []string{v, "other"})
							}
							requireMatchesExactly(t, vs, "engine", []string{"0"})
						}
					})
				}
			}
		}
	}
}

func TestQueueExpression(t *testing.T) {
	tests := []struct {
		name string
		b    Builder
		g    models.Grouping
		f    models.Filters
		want string
	}{
		{"V1 by instance", builders()["v1"], models.GroupInstance, models.Filters{},
			`label_replace(sum by (instance) (vllm:num_requests_running), "vllm_signal", "running", "", "") or label_replace(sum by (instance) (vllm:num_requests_waiting), "vllm_signal", "waiting", "", "")`},
		{"V0 fleet-wide with swapped", builders()["v0"], models.GroupNone, models.Filters{Models: []string{"m"}},
			`label_replace(sum(vllm:num_requests_running{model_name="m"}), "vllm_signal", "running", "", "") or label_replace(sum(vllm:num_requests_waiting{model_name="m"}), "vllm_signal", "waiting", "", "") or label_replace(sum(vllm:num_requests_swapped{model_name="m"}), "vllm_signal", "swapped", "", "")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.b.Queue(tt.g, tt.f))
		})
	}
}

func TestUnionAcrossGenerations(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	require.Equal(t,
		`label_replace(max by (instance, engine, model_name) (vllm:num_preemptions_total), "vllm_signal", "preemptions", "", "") or label_replace(max by (instance, engine, model_name) ((vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc)), "vllm_signal", "kv_usage", "", "")`,
		b.Preemptions(models.Filters{}))
	wt := b.WaitTime("itl", []float64{0.9}, false, models.GroupModel, models.Filters{}, "1m0s")
	require.Contains(t, wt, `histogram_quantile(0.9, sum by (le, model_name) ((rate(vllm:inter_token_latency_seconds_bucket[1m0s]) or rate(vllm:time_per_output_token_seconds_bucket[1m0s]))))`)
}

func TestQuantileName(t *testing.T) {
	for q, want := range map[float64]string{0.5: "p50", 0.9: "p90", 0.99: "p99", 0.999: "p99.9", 0.29: "p29", 0.001: "p0.1"} {
		require.Equal(t, want, QuantileName(q))
	}
}

func TestMatchAnyDeduplicates(t *testing.T) {
	require.Equal(t, `engine=~"0|1"`, matchAny("engine", []string{"1", "0", "1"}))
	require.Equal(t, `engine="0"`, matchAny("engine", []string{"0"}))
}

func TestRankErrors(t *testing.T) {
	b := builders()["v1"]
	_, err := b.TopKRanking("nope", "max", 3, models.GroupInstance, models.Filters{}, "1m", "1h", "15s")
	require.ErrorContains(t, err, `rankBy "nope" is unknown`)
	_, err = b.TopKRanking("waiting", "median", 3, models.GroupInstance, models.Filters{}, "1m", "1h", "15s")
	require.ErrorContains(t, err, `aggregation "median" is unknown`)
}

func TestGPUSeriesExpression(t *testing.T) {
	b := builders()["v1"]
	for _, inst := range [][]string{nil, {`a"b:8000`, "c:8000"}} {
		sels := allSelectors(t, b.GPUSeries(inst))
		require.Len(t, sels, len(GPUMetricNames))
		if inst != nil {
			for _, vs := range sels {
				requireMatchesExactly(t, vs, "vllm_instance", inst)
			}
		}
	}
}
