package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPriorityScopeOptions: the priority grouping and filter parse into the
// type's options, take exactly vLLM's five classes, and are refused where
// they cannot apply.
func TestPriorityScopeOptions(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		want    PriorityScope
		wantErr string
	}{
		{name: "by priority", js: `{"queryType":"waitTime","byPriority":true}`, want: PriorityScope{ByPriority: true}},
		{name: "classes with regex characters", js: `{"queryType":"waitTime","priorities":["<-1",">1"]}`,
			want: PriorityScope{Priorities: []string{"<-1", ">1"}}},
		{name: "none", js: `{"queryType":"waitTime"}`},
		{name: "a raw priority is not a class", js: `{"queryType":"waitTime","priorities":["5"]}`, wantErr: "priorities"},
		{name: "heatmap", js: `{"queryType":"waitTime","format":"heatmap","byPriority":true}`, wantErr: "heatmap"},
		{name: "inter-token latency", js: `{"queryType":"waitTime","family":"itl","priorities":["0"]}`, wantErr: "inter-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(Request{RefID: "A", JSON: []byte(tt.js)})
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			o, ok := OptionsOf[WaitTimeOptions](q)
			require.True(t, ok)
			require.Equal(t, tt.want, o.PriorityScope)
			require.Equal(t, tt.want.ByPriority || len(tt.want.Priorities) > 0, o.PriorityActive())
		})
	}
}

// TestSLOPriorityScope: an objective takes the scope, except on
// inter-token latency; an availability objective ignores the family.
func TestSLOPriorityScope(t *testing.T) {
	q, err := ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"slo","family":"e2e","byPriority":true,"priorities":["-1"]}`)})
	require.NoError(t, err)
	o, ok := OptionsOf[SLOOptions](q)
	require.True(t, ok)
	require.Equal(t, PriorityScope{ByPriority: true, Priorities: []string{"-1"}}, o.PriorityScope)
	_, err = ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"slo","family":"itl","byPriority":true}`)})
	require.ErrorContains(t, err, "inter-token")
	_, err = ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"slo","objective":"availability","byPriority":true}`)})
	require.NoError(t, err)
}

// TestWorkloadPriorityScope: the tokens view takes the scope; the length
// heatmaps refuse it.
func TestWorkloadPriorityScope(t *testing.T) {
	q, err := ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"workload","byPriority":true}`)})
	require.NoError(t, err)
	o, ok := OptionsOf[WorkloadOptions](q)
	require.True(t, ok)
	require.True(t, o.ByPriority)
	_, err = ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"workload","view":"prompt","priorities":["0"]}`)})
	require.ErrorIs(t, err, ErrInvalidQuery)
	require.ErrorContains(t, err, "tokens")
}
