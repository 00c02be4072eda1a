package models

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"
)

func TestRecordingRuleSettings(t *testing.T) {
	tests := []struct {
		name, jsonData string
		on             bool
		prefix, err    string
	}{
		{"on with the shipped prefix by default", `{}`, true, "engine:", ""},
		{"turned off", `{"recordingRules":false}`, false, "engine:", ""},
		{"explicitly on", `{"recordingRules":true}`, true, "engine:", ""},
		{"a renamed group", `{"rulePrefix":"fleet:"}`, true, "fleet:", ""},
		{"a prefix Prometheus cannot hold", `{"rulePrefix":"fleet-"}`, false, "", `rulePrefix "fleet-" may only hold`},
		{"not a boolean", `{"recordingRules":"yes"}`, false, "", "recordingRules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSettings(t.Context(), backend.DataSourceInstanceSettings{URL: "http://prometheus:9090", JSONData: []byte(tt.jsonData)})
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.on, s.RecordingRules)
			require.Equal(t, tt.prefix, s.RulePrefix)
		})
	}
}
