package models

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultRulePrefix is the level the shipped recording rules
// (deploy/prometheus/rules/vllm-recording.rules.yml) name their series with.
const DefaultRulePrefix = "engine:"

// RulesPolicy says when queries are planned on the shipped recording rules
// (jsonData.recordingRules).
type RulesPolicy string

const (
	// RulesExact plans on the rules only where they answer the same
	// question exactly: the step a multiple of the evaluation interval and
	// the rate window a recorded one. The default.
	RulesExact RulesPolicy = "exact"
	// RulesNearest also plans on them where they answer closely: the
	// recorded window nearest the computed rate window (within the bound
	// pkg/vllm states) and any step of at least one evaluation interval.
	RulesNearest RulesPolicy = "nearest"
	// RulesOff never plans on them.
	RulesOff RulesPolicy = "off"
)

// On reports whether queries may be planned on rules at all; the zero
// policy (settings built by hand) is off.
func (p RulesPolicy) On() bool { return p == RulesExact || p == RulesNearest }

// parseRules reads recordingRules (exact unless set) and rulePrefix.
func parseRules(out *Settings, js jsonSettings) error {
	policy, err := parseRulesPolicy(js.RecordingRules)
	if err != nil {
		return err
	}
	out.RecordingRules = policy
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

// parseRulesPolicy reads recordingRules: one of the policies' names, or
// the boolean earlier versions wrote (true is exact, false is off), which
// provisioning files sometimes quote.
func parseRulesPolicy(raw json.RawMessage) (RulesPolicy, error) {
	var b bool
	if len(raw) == 0 || string(raw) == "null" {
		return RulesExact, nil
	}
	if err := json.Unmarshal(raw, &b); err == nil {
		return boolPolicy(b), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch p := RulesPolicy(strings.ToLower(strings.TrimSpace(s))); p {
		case RulesExact, RulesNearest, RulesOff:
			return p, nil
		case "true", "false":
			return boolPolicy(p == "true"), nil
		case "":
			return RulesExact, nil
		}
	}
	return "", fmt.Errorf(`%w: recordingRules %s must be "exact", "nearest" or "off" (true means exact, false off)`, ErrInvalidSettings, raw)
}

func boolPolicy(on bool) RulesPolicy {
	if on {
		return RulesExact
	}
	return RulesOff
}
