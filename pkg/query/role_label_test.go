package query_test

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// TestRoleLabelOnEveryRoleGrouping: the preemption rate and both SLO
// objectives grouped by role carry the role label (from whichever stack
// label held it) like queue and waitTime do, so {{role}} legends and
// panels that do not know the stack work on them too.
func TestRoleLabelOnEveryRoleGrouping(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	series := []map[string]string{
		{"llm_d_ai_role": "prefill", "vllm_signal": "burn_1h_5m"},
		{"llm_isvc_role": "decode", "vllm_signal": "burn_1h_5m"},
	}
	tests := []struct{ name, query string }{
		{"preemption rate", `{"queryType":"preemptions","asSeries":true,"grouping":"role"}`},
		{"latency objective", `{"queryType":"slo","grouping":"role"}`},
		{"availability objective", `{"queryType":"slo","objective":"availability","grouping":"role"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
			require.NoError(t, err)
			fp := fixedProm{series: series}
			e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
				Now: func() time.Time { return now }}
			r := run(t, e, dq("A", tt.query, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			roles := map[string]bool{}
			for _, f := range r.Frames {
				for _, fl := range f.Fields {
					if v := fl.Labels[query.RoleLabel]; v != "" {
						roles[v] = true
					}
				}
			}
			got := make([]string, 0, len(roles))
			for r := range roles {
				got = append(got, r)
			}
			sort.Strings(got)
			require.Equal(t, []string{"decode", "prefill"}, got)
		})
	}
}
