package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestYoungRateUnionText pins the young-series correction's expression:
// the subquery spans the window plus one resolution step (see
// youngCovered), and the factor is window / covered in parentheses, so a
// series the window old is multiplied by exactly 1.
func TestYoungRateUnionText(t *testing.T) {
	const sel = "vllm:num_preemptions_total"
	tests := []struct {
		name, resolution, window, want string
	}{
		{"usual scrape", "15s", "1m", "(rate(" + sel + "[1m]) * (60 / clamp_min(clamp_max(time() - min_over_time(timestamp(" + sel + ")[75s:15s]), 60), 15)))"},
		{"test fleet", "1s", "4s", "(rate(" + sel + "[4s]) * (4 / clamp_min(clamp_max(time() - min_over_time(timestamp(" + sel + ")[5s:1s]), 4), 1)))"},
		{"minute scrape", "1m", "5m", "(rate(" + sel + "[5m]) * (300 / clamp_min(clamp_max(time() - min_over_time(timestamp(" + sel + ")[360s:60s]), 300), 60)))"},
		{"sub-second parts", "1500ms", "1m", "(rate(" + sel + "[1m]) * (60 / clamp_min(clamp_max(time() - min_over_time(timestamp(" + sel + ")[61500ms:1500ms]), 60), 1.5)))"},
		{"no resolution: plain rate", "", "1m", "rate(" + sel + "[1m])"},
		{"window not a duration: plain rate", "15s", "$__rate_interval", "rate(" + sel + "[$__rate_interval])"},
		{"resolution not a duration: plain rate", "x", "1m", "rate(" + sel + "[1m])"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Resolution: tt.resolution}
			require.Equal(t, tt.want, b.youngRateUnion(Preemptions, models.Filters{}, "", tt.window))
		})
	}
}

// TestYoungRateSubqueryRange parses the expression and checks the
// subquery's range is the rate window plus its step, for any window and
// resolution: the step at or before t-window that old series need.
func TestYoungRateSubqueryRange(t *testing.T) {
	tests := []struct {
		window     string
		resolution string
		rng, step  time.Duration
	}{
		{"1m", "15s", 75 * time.Second, 15 * time.Second},
		{"2m", "30s", 150 * time.Second, 30 * time.Second},
		{"4s", "1s", 5 * time.Second, time.Second},
		{"1h", "1m", 61 * time.Minute, time.Minute},
		{"90s", "2500ms", 92500 * time.Millisecond, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.window+"/"+tt.resolution, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Resolution: tt.resolution}
			expr := b.PreemptionRate(models.GroupInstance, models.Filters{Models: []string{"m"}}, tt.window)
			e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
			require.NoError(t, err, expr)
			var subs []*parser.SubqueryExpr
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				if s, ok := n.(*parser.SubqueryExpr); ok {
					subs = append(subs, s)
				}
				return nil
			})
			require.Len(t, subs, 1, expr)
			require.Equal(t, tt.rng, subs[0].Range, expr)
			require.Equal(t, tt.step, subs[0].Step, expr)
		})
	}
}
