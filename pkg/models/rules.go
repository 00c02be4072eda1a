package models

import "fmt"

// DefaultRulePrefix is the level the shipped recording rules
// (deploy/prometheus/rules/vllm-recording.rules.yml) name their series with.
const DefaultRulePrefix = "engine:"

// parseRules reads recordingRules (on unless false) and rulePrefix.
func parseRules(out *Settings, js jsonSettings) error {
	out.RecordingRules = js.RecordingRules == nil || *js.RecordingRules
	out.RulePrefix = DefaultRulePrefix
	if js.RulePrefix == "" {
		return nil
	}
	if !metricPrefRE.MatchString(js.RulePrefix) {
		return fmt.Errorf("%w: rulePrefix %q may only hold letters, digits, '_' and ':' (e.g. engine:)", ErrInvalidSettings, js.RulePrefix)
	}
	out.RulePrefix = js.RulePrefix
	return nil
}
