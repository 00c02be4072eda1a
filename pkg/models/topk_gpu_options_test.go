package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTopKFormat: topk without a format returns both the series and the
// table; format "series" is asSeries, "table" and "both" are not, and an
// unknown format is an error that names the field and the allowed values.
func TestTopKFormat(t *testing.T) {
	tests := []struct {
		name, js     string
		wantFormat   string
		wantAsSeries bool
		wantErr      string
	}{
		{name: "absent: series and table", js: `{"queryType":"topk"}`, wantFormat: "", wantAsSeries: false},
		{name: "series is asSeries", js: `{"queryType":"topk","format":"series"}`, wantFormat: "series", wantAsSeries: true},
		{name: "table only", js: `{"queryType":"topk","format":"table"}`, wantFormat: "table", wantAsSeries: false},
		{name: "both", js: `{"queryType":"topk","format":"both"}`, wantFormat: "both", wantAsSeries: false},
		{name: "asSeries as earlier versions wrote it", js: `{"queryType":"topk","asSeries":true}`, wantFormat: "", wantAsSeries: true},
		{name: "unknown format", js: `{"queryType":"topk","format":"pie"}`, wantErr: `format "pie" is unknown; allowed: table, series, both`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(dataQuery(tt.js))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantFormat, optionField(q, "format"))
			require.Equal(t, tt.wantAsSeries, optionField(q, "asSeries"))
		})
	}
}

// TestGPUOptions: gpu reads the node agents as a table by default; source
// and format take only their listed values, and an unknown one is an error
// that names the field and the allowed values.
func TestGPUOptions(t *testing.T) {
	tests := []struct {
		name, js               string
		wantSource, wantFormat string
		wantErr                string
	}{
		{name: "defaults", js: `{"queryType":"gpu"}`, wantSource: "agents", wantFormat: "table"},
		{name: "dcgm series", js: `{"queryType":"gpu","source":"dcgm","format":"series"}`, wantSource: "dcgm", wantFormat: "series"},
		{name: "agents as scraped", js: `{"queryType":"gpu","source":"prometheus"}`, wantSource: "prometheus", wantFormat: "table"},
		{name: "unknown source", js: `{"queryType":"gpu","source":"nvml"}`, wantErr: `source "nvml" is unknown; allowed: agents, prometheus, dcgm`},
		{name: "unknown format", js: `{"queryType":"gpu","format":"both"}`, wantErr: `format "both" is unknown; allowed: table, series`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(dataQuery(tt.js))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantSource, optionField(q, "source"))
			require.Equal(t, tt.wantFormat, optionField(q, "format"))
		})
	}
}
