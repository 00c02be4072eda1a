package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseWorkload(t *testing.T) {
	tests := []struct {
		name     string
		js       string
		view     string
		group    Grouping
		heatmap  bool
		wantErr  string
		errNames []string
	}{
		{name: "tokens by default, one series per instance", js: `{"queryType":"workload"}`, view: "tokens", group: GroupInstance},
		{name: "prompt lengths by model", js: `{"queryType":"workload","view":"prompt","grouping":"model"}`, view: "prompt", group: GroupModel, heatmap: true},
		{name: "generation lengths for the fleet", js: `{"queryType":"workload","view":"generation","grouping":"none"}`, view: "generation", group: GroupNone, heatmap: true},
		{name: "unknown view names the allowed ones", js: `{"queryType":"workload","view":"heatmap"}`,
			wantErr: `view "heatmap" is unknown; allowed: tokens, prompt, generation`},
		{name: "views are case-sensitive", js: `{"queryType":"workload","view":"Prompt"}`, wantErr: `view "Prompt" is unknown`},
		{name: "view not a string", js: `{"queryType":"workload","view":3}`, wantErr: "malformed query JSON: view is 3, not a string"},
		{name: "grouping checked like the others", js: `{"queryType":"workload","grouping":"pod"}`, wantErr: `grouping "pod" is not allowed for workload`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := parseJSON(tt.js)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, QueryWorkload, q.Type)
			require.Equal(t, tt.view, optionField(q, "view"))
			require.Equal(t, tt.group, q.Grouping)
			require.Equal(t, tt.heatmap, q.Options.(WorkloadOptions).Heatmap())
		})
	}
}

// TestWorkloadListed: the type is offered (and so accepted) between host
// and promql, where the editor shows it.
func TestWorkloadListed(t *testing.T) {
	require.Contains(t, QueryTypes, QueryWorkload)
	_, err := parseJSON(`{"queryType":"workloads"}`)
	require.ErrorContains(t, err, "workload")
}
