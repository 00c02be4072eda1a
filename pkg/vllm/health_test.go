package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestEnginesNow: the health check's fleet is one sample per engine
// label set, across every wire name of the running gauge.
func TestEnginesNow(t *testing.T) {
	tests := []struct {
		name string
		b    Builder
		f    models.Filters
		want string
	}{
		{"default", Builder{Prefix: "vllm:", InstanceLabel: "instance"}, models.Filters{},
			`group by (instance, engine, model_name) (vllm:num_requests_running)`},
		{"filtered", Builder{Prefix: "vllm:", InstanceLabel: "instance"}, models.Filters{Models: []string{"m"}},
			`group by (instance, engine, model_name) (vllm:num_requests_running{model_name="m"})`},
		{"pods, two prefixes", profileBuilder(models.ProfileKServe), models.Filters{},
			`group by (namespace, pod, engine, model_name) ((kserve_vllm:num_requests_running or on (namespace, pod) vllm:num_requests_running))`},
		{"scoped", Builder{Prefix: "vllm:", InstanceLabel: "instance", Scope: mustMatchers(t, `cluster="eu"`)}, models.Filters{},
			`group by (instance, engine, model_name) (vllm:num_requests_running{cluster="eu"})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.EnginesNow(tt.f)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}

// TestEnginesLastSeen: the lookback subquery steps at the scrape interval,
// never under a second, both written in whole seconds.
func TestEnginesLastSeen(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		name     string
		b        Builder
		lookback time.Duration
		scrape   time.Duration
		want     string
	}{
		{"hour at 15s", b, time.Hour, 15 * time.Second,
			`max by (instance, engine, model_name) (max_over_time(timestamp(vllm:num_requests_running)[3600s:15s]))`},
		{"no scrape interval steps at 1s", b, time.Hour, 0,
			`max by (instance, engine, model_name) (max_over_time(timestamp(vllm:num_requests_running)[3600s:1s]))`},
		{"sub-second scrape steps at 1s", b, time.Hour, 500 * time.Millisecond,
			`max by (instance, engine, model_name) (max_over_time(timestamp(vllm:num_requests_running)[3600s:1s]))`},
		{"fractional seconds round down", b, 90*time.Second + 900*time.Millisecond, 1500 * time.Millisecond,
			`max by (instance, engine, model_name) (max_over_time(timestamp(vllm:num_requests_running)[90s:1s]))`},
		{"pods, two prefixes", profileBuilder(models.ProfileKServe), time.Hour, 30 * time.Second,
			`max by (namespace, pod, engine, model_name) (max_over_time(timestamp((kserve_vllm:num_requests_running or on (namespace, pod) vllm:num_requests_running))[3600s:30s]))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.EnginesLastSeen(models.Filters{}, tt.lookback, tt.scrape)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
}

// TestScrapeSpacing: the spacing walk wraps each running-gauge selector
// in timestamp() (a union's timestamp would be the evaluation time), keeps
// the scope, and parses.
func TestScrapeSpacing(t *testing.T) {
	walk := func(times string) string { return "(" + times + " > time() - 1)[600s:1s]" }
	spacing := func(times string) string {
		w := walk(times)
		return "quantile(0.5, (max_over_time(" + w + ") - min_over_time(" + w + ")) / ((count_over_time(" + w + ") - 1) >= 2))"
	}
	tests := []struct {
		name string
		b    Builder
		step time.Duration
		want string
	}{
		{"plain", Builder{Prefix: "vllm:"}, time.Second, spacing("timestamp(vllm:num_requests_running)")},
		{"scoped", Builder{Prefix: "vllm:", Scope: mustMatchers(t, `cluster="eu"`)}, time.Second,
			spacing(`timestamp(vllm:num_requests_running{cluster="eu"})`)},
		{"two prefixes: timestamp of each", Builder{Prefixes: []string{"vllm:", "ray_vllm:"}}, time.Second,
			spacing("(timestamp(vllm:num_requests_running) or timestamp(ray_vllm:num_requests_running))")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.ScrapeSpacing(10*time.Minute, tt.step)
			require.Equal(t, tt.want, got)
			_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
			require.NoError(t, err)
		})
	}
	t.Run("a step below a second", func(t *testing.T) {
		got := Builder{Prefix: "vllm:"}.ScrapeSpacing(5*time.Minute, 250*time.Millisecond)
		require.Contains(t, got, "(timestamp(vllm:num_requests_running) > time() - 0.25)[300s:250ms]")
		_, err := parser.NewParser(parser.Options{}).ParseExpr(got)
		require.NoError(t, err)
	})
}
