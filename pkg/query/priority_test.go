package query

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestPriorityNotices: which answers say the fleet lacks priority
// scheduling, and which that some engines do.
func TestPriorityNotices(t *testing.T) {
	withLabel := map[string]string{vllm.SignalTagLabel: "p99", "priority": "-1"}
	without := map[string]string{vllm.SignalTagLabel: "p99"}
	live := map[string]string{vllm.SignalTagLabel: "live"}
	none := []data.Notice{{Severity: data.NoticeSeverityWarning, Text: vllm.NoPriorityText}}
	some := []data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.SomeWithoutPriorityText}}
	split := models.PriorityScope{ByPriority: true}
	filter := models.PriorityScope{Priorities: []string{"0"}}
	tests := []struct {
		name   string
		scope  models.PriorityScope
		series []map[string]string
		want   []data.Notice
	}{
		{"no scope", models.PriorityScope{}, []map[string]string{without}, nil},
		{"split, every series labelled", split, []map[string]string{withLabel, live}, nil},
		{"split, none labelled", split, []map[string]string{without, live}, none},
		{"split, some labelled", split, []map[string]string{withLabel, without}, some},
		{"split, only unscoped series", split, []map[string]string{live}, none},
		{"filter, something matched", filter, []map[string]string{without}, nil},
		{"filter, nothing matched", filter, []map[string]string{live}, none},
		{"filter, empty answer", filter, nil, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m prom.Matrix
			for _, l := range tt.series {
				m = append(m, &prom.Series{Labels: l})
			}
			got := priorityNotices(m, tt.scope, notLive)
			require.Equal(t, tt.want, got)
			require.Equal(t, len(tt.scope.Priorities) > 0 && len(tt.want) > 0, filteredAway(got, tt.scope))
		})
	}
}
