package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// TestScrapeSignals pins the scrape-health expressions of the fleet table
// and the health check: grouped by the server's identity labels (never by
// engine or model: the scrape's series carry neither), inside the data
// source's scope, and parsing with Prometheus' parser.
func TestScrapeSignals(t *testing.T) {
	scope := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}
	tests := []struct {
		name          string
		b             Builder
		fleet, health []string
	}{
		{name: "instance", b: Builder{Prefix: "vllm:", InstanceLabel: "instance"},
			fleet: []string{"max by (instance) (changes(up[1h]))", "max by (instance) (scrape_duration_seconds)",
				"max by (instance) (scrape_timeout_seconds)"},
			health: []string{"max by (instance) (changes(up[600s])) >= 2 and on (instance) group by (instance) (last_over_time(vllm:num_requests_running[600s]))",
				"max by (instance) (max_over_time(scrape_duration_seconds[600s])) and on (instance) group by (instance) (last_over_time(vllm:num_requests_running[600s]))",
				"max by (instance) (scrape_timeout_seconds)"}},
		{name: "namespace/pod, scoped", b: Builder{Prefix: "vllm:", InstanceLabel: "pod", Identity: []string{"namespace", "pod"}, Scope: scope},
			fleet: []string{`max by (namespace, pod) (changes(up{cluster="a"}[1h]))`, `max by (namespace, pod) (scrape_duration_seconds{cluster="a"})`,
				`max by (namespace, pod) (scrape_timeout_seconds{cluster="a"})`},
			health: []string{`max by (namespace, pod) (changes(up{cluster="a"}[600s])) >= 2 and on (namespace, pod) group by (namespace, pod) (last_over_time(vllm:num_requests_running{cluster="a"}[600s]))`,
				`max by (namespace, pod) (max_over_time(scrape_duration_seconds{cluster="a"}[600s])) and on (namespace, pod) group by (namespace, pod) (last_over_time(vllm:num_requests_running{cluster="a"}[600s]))`, `max by (namespace, pod) (scrape_timeout_seconds{cluster="a"})`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(sigs []SignalExpr, want []string) {
				t.Helper()
				require.Equal(t, []string{FleetUpChanges, FleetScrapeDuration, FleetScrapeTimeout}, names(sigs))
				for i, s := range sigs {
					require.Equal(t, want[i], s.Expr)
					_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
					require.NoError(t, err, s.Expr)
				}
			}
			check(tt.b.FleetScrapeSignals("1h"), tt.fleet)
			check(tt.b.HealthScrapeSignals(10*time.Minute), tt.health)
		})
	}
}

func names(sigs []SignalExpr) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = s.Name
	}
	return out
}
