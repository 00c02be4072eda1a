package deploytest

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

const alertmanagerFile = "deploy/alertmanager/alertmanager.yml"

// amRoute is the part of an Alertmanager route this example uses.
type amRoute struct {
	Receiver string    `yaml:"receiver"`
	GroupBy  []string  `yaml:"group_by"`
	Matchers []string  `yaml:"matchers"`
	Continue bool      `yaml:"continue"`
	Routes   []amRoute `yaml:"routes"`
}

type amInhibitRule struct {
	SourceMatchers []string `yaml:"source_matchers"`
	TargetMatchers []string `yaml:"target_matchers"`
	Equal          []string `yaml:"equal"`
}

type amConfig struct {
	Route        amRoute         `yaml:"route"`
	InhibitRules []amInhibitRule `yaml:"inhibit_rules"`
	Receivers    []struct {
		Name           string `yaml:"name"`
		WebhookConfigs []struct {
			URL string `yaml:"url"`
		} `yaml:"webhook_configs"`
	} `yaml:"receivers"`
}

// equalityMatcher is the only matcher form the example uses: label="value".
var equalityMatcher = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"([^"]*)"\s*$`)

// matches reports whether labels satisfy every matcher of a route.
func matches(t *testing.T, matchers []string, labels map[string]string) bool {
	t.Helper()
	for _, m := range matchers {
		g := equalityMatcher.FindStringSubmatch(m)
		require.NotNil(t, g, "%s: matcher %q is not of the form label=\"value\"; extend this test", alertmanagerFile, m)
		if labels[g[1]] != g[2] {
			return false
		}
	}
	return true
}

// route returns the receiver Alertmanager picks for labels: the first
// matching child (recursively), else the route's own receiver, inherited
// from the parent when unset. The example uses no `continue`.
func route(t *testing.T, r amRoute, parentReceiver string, labels map[string]string) string {
	t.Helper()
	receiver := r.Receiver
	if receiver == "" {
		receiver = parentReceiver
	}
	for _, child := range r.Routes {
		require.False(t, child.Continue, "continue: true is not modelled by this test")
		if matches(t, child.Matchers, labels) {
			return route(t, child, receiver, labels)
		}
	}
	return receiver
}

// walkRoutes calls fn on r and every route below it.
func walkRoutes(r amRoute, fn func(amRoute)) {
	fn(r)
	for _, c := range r.Routes {
		walkRoutes(c, fn)
	}
}

// TestAlertmanagerConfig checks the routing example without Alertmanager:
// every route names a receiver that exists, every receiver is used and has
// a webhook, alerts are grouped per alert and vLLM server, the severities
// of the vLLM rules reach the pager and the chat, and warnings are
// inhibited by a critical alert on the same instance.
func TestAlertmanagerConfig(t *testing.T) {
	var cfg amConfig
	readYAML(t, repoPath(t, alertmanagerFile), &cfg)

	receivers := map[string]bool{}
	for _, r := range cfg.Receivers {
		require.NotEmpty(t, r.Name, "a receiver has no name")
		require.False(t, receivers[r.Name], "receiver %q is defined twice", r.Name)
		receivers[r.Name] = true
		require.NotEmpty(t, r.WebhookConfigs, "receiver %q has no webhook", r.Name)
		for _, w := range r.WebhookConfigs {
			require.Regexp(t, `^https?://`, w.URL, "receiver %q webhook URL", r.Name)
		}
	}
	require.NotEmpty(t, cfg.Route.Receiver, "the top-level route needs a default receiver")
	used := map[string]bool{}
	walkRoutes(cfg.Route, func(r amRoute) {
		if r.Receiver != "" {
			require.True(t, receivers[r.Receiver], "a route names receiver %q, which is not defined", r.Receiver)
			used[r.Receiver] = true
		}
	})
	for name := range receivers {
		require.True(t, used[name], "receiver %q is never routed to", name)
	}

	require.ElementsMatch(t, []string{"alertname", "instance"}, cfg.Route.GroupBy)

	tests := []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"alertname": "VLLMEngineDown", "severity": "critical", "instance": "10.0.0.1:8000", "job": "vllm"}, "pager"},
		{map[string]string{"alertname": "VLLMTargetsMissing", "severity": "critical", "job": "vllm"}, "pager"},
		{map[string]string{"alertname": "VLLMQueueBacklog", "severity": "warning", "instance": "10.0.0.1:8000", "model_name": "m"}, "chat"},
		{map[string]string{"alertname": "VLLMKVCacheNearlyFull", "severity": "warning", "instance": "10.0.0.1:8000"}, "chat"},
		{map[string]string{"alertname": "SomethingElse"}, "chat"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, route(t, cfg.Route, "", tt.labels), "receiver for %v", tt.labels)
	}

	// The severities the rules use must be the ones routed above.
	rules, err := os.ReadFile(repoPath(t, rulesFile))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`severity: (\w+)`).FindAllStringSubmatch(string(rules), -1) {
		require.Contains(t, []string{"critical", "warning"}, m[1], "%s uses severity %q, which %s does not route", rulesFile, m[1], alertmanagerFile)
	}

	inhibits := slices.ContainsFunc(cfg.InhibitRules, func(r amInhibitRule) bool {
		return slices.Equal(r.SourceMatchers, []string{`severity="critical"`}) &&
			slices.Equal(r.TargetMatchers, []string{`severity="warning"`}) &&
			slices.Contains(r.Equal, "instance")
	})
	require.True(t, inhibits, "no inhibit rule mutes warnings while a critical alert fires for the same instance")
}
