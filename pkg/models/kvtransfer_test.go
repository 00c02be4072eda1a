package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKVTransferAndRole(t *testing.T) {
	tests := []struct {
		name     string
		js       string
		grouping Grouping
		quant    []float64
		wantErr  string
	}{
		{name: "kvTransfer defaults", js: `{"queryType":"kvTransfer"}`, grouping: GroupRole, quant: []float64{0.5, 0.9, 0.99}},
		{name: "kvTransfer by instance", js: `{"queryType":"kvTransfer","grouping":"instance","quantiles":[0.75]}`, grouping: GroupInstance, quant: []float64{0.75}},
		{name: "kvTransfer quantile out of range", js: `{"queryType":"kvTransfer","quantiles":[1]}`, wantErr: "quantile 1 is out of range (0, 1)"},
		{name: "kvTransfer bad grouping", js: `{"queryType":"kvTransfer","grouping":"pod"}`, wantErr: `grouping "pod" is not allowed for kvTransfer; allowed: none, model, instance, instance_engine, role`},
		{name: "queue by role", js: `{"queryType":"queue","grouping":"role"}`, grouping: GroupRole},
		{name: "waitTime by role", js: `{"queryType":"waitTime","grouping":"role"}`, grouping: GroupRole, quant: []float64{0.5, 0.9, 0.99}},
		{name: "saturation by role", js: `{"queryType":"saturation","grouping":"role"}`, grouping: GroupRole},
		{name: "queue keeps its default", js: `{"queryType":"queue"}`, grouping: GroupInstance},
		{name: "topk refuses role", js: `{"queryType":"topk","grouping":"role"}`, wantErr: `grouping "role" is not allowed for topk; allowed: instance, instance_engine`},
		{name: "fleet refuses role (its role is a column)", js: `{"queryType":"fleet","grouping":"role"}`, wantErr: `grouping "role" is not allowed for fleet`},
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
			require.Equal(t, tt.grouping, q.Grouping)
			if tt.quant != nil {
				require.Equal(t, tt.quant, optionField(q, "quantiles"))
			}
		})
	}
}

func TestKVTransferIsListedBeforePromQL(t *testing.T) {
	idx := map[QueryType]int{}
	for i, qt := range QueryTypes {
		idx[qt] = i
	}
	require.Contains(t, idx, QueryKVTransfer)
	require.Less(t, idx[QueryHost], idx[QueryKVTransfer])
	require.Less(t, idx[QueryKVTransfer], idx[QueryPromQL])
}

func TestRoleLabelSetting(t *testing.T) {
	tests := []struct {
		name, json, want, wantErr string
	}{
		{name: "unset tries the known labels", json: `{}`, want: ""},
		{name: "set", json: `{"roleLabel":"pd_role"}`, want: "pd_role"},
		{name: "not a label name", json: `{"roleLabel":"llm-d.ai/role"}`, wantErr: `roleLabel "llm-d.ai/role" is not a Prometheus label name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings(Instance{URL: "http://prom:9090", JSONData: []byte(tt.json)})
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, s.RoleLabel)
		})
	}
}
