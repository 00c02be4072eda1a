package models

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSpecDecodeAndLoRA(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tr := TimeRange{From: now.Add(-time.Hour), To: now}
	tests := []struct {
		name       string
		js         string
		wantType   QueryType
		wantGroup  Grouping
		wantFormat string
		wantErr    string
	}{
		{name: "specDecode defaults to one series per instance", js: `{"queryType":"specDecode"}`, wantType: QuerySpecDecode, wantGroup: GroupInstance},
		{name: "specDecode fleet-wide", js: `{"queryType":"specDecode","grouping":"none"}`, wantType: QuerySpecDecode, wantGroup: GroupNone},
		{name: "specDecode per engine", js: `{"queryType":"specDecode","grouping":"instance_engine"}`, wantType: QuerySpecDecode, wantGroup: GroupInstanceEngine},
		{name: "specDecode by model", js: `{"queryType":"specDecode","grouping":"model"}`, wantType: QuerySpecDecode, wantGroup: GroupModel},
		{name: "specDecode unknown grouping", js: `{"queryType":"specDecode","grouping":"pod"}`, wantErr: `grouping "pod" is not allowed for specDecode`},
		{name: "lora defaults to the table", js: `{"queryType":"lora"}`, wantType: QueryLoRA, wantGroup: GroupInstance, wantFormat: "table"},
		{name: "lora series", js: `{"queryType":"lora","format":"series"}`, wantType: QueryLoRA, wantGroup: GroupInstance, wantFormat: "series"},
		{name: "lora instance grouping is accepted", js: `{"queryType":"lora","grouping":"instance","format":"table"}`, wantType: QueryLoRA, wantGroup: GroupInstance, wantFormat: "table"},
		{name: "lora unknown format names the allowed ones", js: `{"queryType":"lora","format":"both"}`, wantErr: `format "both" is unknown; allowed: table, series`},
		{name: "lora format of the wrong type", js: `{"queryType":"lora","format":1}`, wantErr: "malformed query JSON"},
		{name: "lora refuses model grouping", js: `{"queryType":"lora","grouping":"model"}`, wantErr: `grouping "model" is not allowed for lora: vLLM reports LoRA adapters once per server; allowed: instance`},
		{name: "lora refuses engine grouping", js: `{"queryType":"lora","grouping":"instance_engine"}`, wantErr: `allowed: instance`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(Request{RefID: "A", JSON: json.RawMessage(tt.js), TimeRange: tr})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, errors.Is(err, ErrInvalidQuery))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantType, q.Type)
			require.Equal(t, tt.wantGroup, q.Grouping)
			format, _ := optionField(q, "format").(string)
			require.Equal(t, tt.wantFormat, format)
		})
	}
}

// TestNewTypesListedBeforePromQL: the editor shows types in QueryTypes'
// order; the two new ones come after host and raw PromQL stays last.
func TestNewTypesListedBeforePromQL(t *testing.T) {
	idx := map[QueryType]int{}
	for i, qt := range QueryTypes {
		idx[qt] = i
	}
	require.Contains(t, idx, QuerySpecDecode)
	require.Contains(t, idx, QueryLoRA)
	require.Greater(t, idx[QuerySpecDecode], idx[QueryHost])
	require.Greater(t, idx[QueryLoRA], idx[QuerySpecDecode])
	require.Equal(t, len(QueryTypes)-1, idx[QueryPromQL])
}
