package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseWaitTimeFormat(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		heatmap bool
		family  string
		wantErr string
	}{
		{name: "series by default", js: `{"queryType":"waitTime"}`, family: "queue_time"},
		{name: "series named", js: `{"queryType":"waitTime","format":"series","family":"ttft"}`, family: "ttft"},
		{name: "heatmap of TTFT", js: `{"queryType":"waitTime","format":"heatmap","family":"ttft"}`, heatmap: true, family: "ttft"},
		{name: "heatmap of inter-token latency", js: `{"queryType":"waitTime","format":"heatmap","family":"itl","grouping":"model"}`, heatmap: true, family: "itl"},
		{name: "unknown format names the allowed ones", js: `{"queryType":"waitTime","format":"histogram"}`,
			wantErr: `format "histogram" is unknown; allowed: series, heatmap`},
		{name: "format of the wrong type", js: `{"queryType":"waitTime","format":3}`, wantErr: "format"},
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
			o, ok := OptionsOf[WaitTimeOptions](q)
			require.True(t, ok)
			require.Equal(t, tt.heatmap, o.Heatmap())
			require.Equal(t, tt.family, o.Family)
		})
	}
}
