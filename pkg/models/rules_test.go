package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordingRuleSettings(t *testing.T) {
	tests := []struct {
		name, jsonData string
		policy         RulesPolicy
		prefix, err    string
	}{
		{"exact with the shipped prefix by default", `{}`, RulesExact, "engine:", ""},
		{"null is the default", `{"recordingRules":null}`, RulesExact, "engine:", ""},
		{"false, as earlier versions wrote it, is off", `{"recordingRules":false}`, RulesOff, "engine:", ""},
		{"true, as earlier versions wrote it, is exact", `{"recordingRules":true}`, RulesExact, "engine:", ""},
		{"a quoted boolean from a provisioning file", `{"recordingRules":"false"}`, RulesOff, "engine:", ""},
		{"exact by name", `{"recordingRules":"exact"}`, RulesExact, "engine:", ""},
		{"nearest, opted in", `{"recordingRules":"nearest"}`, RulesNearest, "engine:", ""},
		{"names are case-blind", `{"recordingRules":" Nearest "}`, RulesNearest, "engine:", ""},
		{"off by name", `{"recordingRules":"off"}`, RulesOff, "engine:", ""},
		{"a renamed group", `{"rulePrefix":"fleet:"}`, RulesExact, "fleet:", ""},
		{"a prefix Prometheus cannot hold", `{"rulePrefix":"fleet-"}`, "", "", `rulePrefix "fleet-" may only hold`},
		{"an unknown policy", `{"recordingRules":"yes"}`, "", "", `recordingRules "yes" must be "exact", "nearest" or "off"`},
		{"a number", `{"recordingRules":1}`, "", "", `recordingRules 1 must be`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings(Instance{URL: "http://prometheus:9090", JSONData: []byte(tt.jsonData)})
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.policy, s.RecordingRules)
			require.Equal(t, tt.policy != RulesOff, s.RecordingRules.On())
			require.Equal(t, tt.prefix, s.RulePrefix)
		})
	}
}

// TestRulesPolicyOn: only exact and nearest plan on rules; the zero value
// (settings built in code) does not.
func TestRulesPolicyOn(t *testing.T) {
	for p, on := range map[RulesPolicy]bool{RulesExact: true, RulesNearest: true, RulesOff: false, "": false} {
		require.Equal(t, on, p.On(), "%q", p)
	}
}
