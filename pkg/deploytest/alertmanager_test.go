package deploytest

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
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
var equalityMatcher = regexp.MustCompile(`^(\w+)(=~?)"(.*)"$`)

// matches reports whether labels satisfy every matcher of a route.
func matches(t *testing.T, matchers []string, labels map[string]string) bool {
	t.Helper()
	for _, m := range matchers {
		g := equalityMatcher.FindStringSubmatch(m)
		require.NotNil(t, g, "%s: matcher %q is not of the form label=\"value\" or label=~\"regex\"; extend this test", alertmanagerFile, m)
		if g[2] == "=" && labels[g[1]] != g[3] {
			return false
		}
		// Alertmanager anchors a matcher's regex at both ends.
		if g[2] == "=~" && !regexp.MustCompile("^(?:"+g[3]+")$").MatchString(labels[g[1]]) {
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

	// A server's identity: instance on plain Prometheus, namespace and pod on
	// Kubernetes (the rules drop instance there), cluster on shared stores.
	require.ElementsMatch(t, []string{"alertname", "cluster", "namespace", "pod", "instance"}, cfg.Route.GroupBy)

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
		return slices.Contains(r.SourceMatchers, `severity="critical"`) &&
			slices.Contains(r.TargetMatchers, `severity="warning"`) &&
			slices.Contains(r.Equal, "instance")
	})
	require.True(t, inhibits, "no inhibit rule mutes warnings while a critical alert fires for the same instance")
}

// inhibited reports whether an alert with labels source mutes one with
// labels target under the config's inhibit rules. As in Alertmanager, a
// label missing from an alert has the empty value in `equal`.
func inhibited(t *testing.T, cfg amConfig, source, target map[string]string) bool {
	t.Helper()
	return slices.ContainsFunc(cfg.InhibitRules, func(r amInhibitRule) bool {
		if !matches(t, r.SourceMatchers, source) || !matches(t, r.TargetMatchers, target) {
			return false
		}
		return !slices.ContainsFunc(r.Equal, func(l string) bool { return source[l] != target[l] })
	})
}

// TestAlertmanagerPerServer: on both label shapes the rules give (plain:
// instance; Kubernetes: namespace and pod, no instance), a down server mutes
// its own warnings only, and two servers' alerts go out in two groups.
func TestAlertmanagerPerServer(t *testing.T) {
	var cfg amConfig
	readYAML(t, repoPath(t, alertmanagerFile), &cfg)
	alert := func(id map[string]string, name, severity string) map[string]string {
		l := maps.Clone(id)
		l["alertname"], l["severity"] = name, severity
		return l
	}
	down := func(id map[string]string) map[string]string { return alert(id, "VLLMEngineDown", "critical") }
	backlog := func(id map[string]string) map[string]string { return alert(id, "VLLMQueueBacklog", "warning") }
	groupKey := func(l map[string]string) string {
		var key []string
		for _, g := range cfg.Route.GroupBy {
			key = append(key, g+"="+l[g])
		}
		return strings.Join(key, ",")
	}
	tests := []struct {
		name string
		a, b map[string]string // two servers
	}{
		{name: "plain Prometheus", a: map[string]string{"instance": "10.0.0.1:8000"}, b: map[string]string{"instance": "10.0.0.2:8000"}},
		{name: "Kubernetes, two pods", a: map[string]string{"namespace": "inference", "pod": "vllm-0"}, b: map[string]string{"namespace": "inference", "pod": "vllm-1"}},
		{name: "Kubernetes, one pod name in two namespaces", a: map[string]string{"namespace": "inference", "pod": "vllm-0"}, b: map[string]string{"namespace": "research", "pod": "vllm-0"}},
		{name: "two clusters", a: map[string]string{"cluster": "eu", "instance": "vllm-0:8000"}, b: map[string]string{"cluster": "us", "instance": "vllm-0:8000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, inhibited(t, cfg, down(tt.a), backlog(tt.a)), "a down server mutes its own warnings")
			require.False(t, inhibited(t, cfg, down(tt.a), backlog(tt.b)), "a down server must not mute another server's warnings")
			require.False(t, inhibited(t, cfg, backlog(tt.a), down(tt.a)), "warnings never mute critical alerts")
			require.NotEqual(t, groupKey(backlog(tt.a)), groupKey(backlog(tt.b)), "one notification group per server")
		})
	}

	// The SLO burn-rate alerts are per model (no pod or instance): a fast
	// burn mutes its own slow burn only, never another model's or SLO's, nor
	// a server's warnings; a down server does not mute them either.
	slo := func(model, name, severity string) map[string]string {
		return map[string]string{"alertname": name, "severity": severity, "namespace": "inference", "model_name": model, "slo": "ttft-1s-99"}
	}
	fastA, slowA, slowB := slo("a", "VLLMTTFTBudgetBurnFast", "critical"), slo("a", "VLLMTTFTBudgetBurnSlow", "warning"), slo("b", "VLLMTTFTBudgetBurnSlow", "warning")
	otherSLO := maps.Clone(slowA)
	otherSLO["slo"] = "itl-100ms-99"
	pod := map[string]string{"namespace": "inference", "pod": "vllm-0"}
	require.True(t, inhibited(t, cfg, fastA, slowA), "a fast burn mutes its own slow burn")
	require.False(t, inhibited(t, cfg, fastA, slowB), "one model's fast burn must not mute another model's slow burn")
	require.False(t, inhibited(t, cfg, fastA, otherSLO), "nor another SLO of the model")
	require.False(t, inhibited(t, cfg, fastA, backlog(map[string]string{"namespace": "inference"})), "nor a server's warnings")
	require.False(t, inhibited(t, cfg, down(pod), slowA), "a down server does not mute a model's budget alerts")
}

// TestAmtoolCheckConfig runs Alertmanager's own checker on the shipped file
// (it parses routes, matchers, inhibit rules and receivers as Alertmanager
// does, which TestAlertmanagerConfig's YAML reading does not), and on
// broken copies, which it must reject: a route to a receiver that does not
// exist, and a matcher Alertmanager cannot parse.
func TestAmtoolCheckConfig(t *testing.T) {
	raw, err := os.ReadFile(repoPath(t, alertmanagerFile))
	require.NoError(t, err)
	shipped := string(raw)
	tests := []struct {
		name       string
		from, to   string // the edit that breaks the copy ("" for none)
		wantOK     bool
		wantOutput string
	}{
		{name: "shipped", wantOK: true, wantOutput: "SUCCESS"},
		{name: "route to an undefined receiver", from: "      receiver: pager\n", to: "      receiver: pagr\n", wantOutput: `undefined receiver "pagr"`},
		{name: "unparsable matcher", from: `['severity="critical"']`, to: `['severity=="critical"']`, wantOutput: "matcher value contains unescaped double quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := shipped
			if tt.from != "" {
				require.Contains(t, cfg, tt.from, "the edit no longer applies to %s", alertmanagerFile)
				cfg = strings.Replace(cfg, tt.from, tt.to, 1)
			}
			path := filepath.Join(t.TempDir(), "alertmanager.yml")
			writeFile(t, path, cfg)
			out, ok := runTool(t, repoRoot(t), promtest.AmtoolBinary(t), "check-config", path)
			require.Equal(t, tt.wantOK, ok, "amtool check-config:\n%s", out)
			require.Contains(t, out, tt.wantOutput)
			if tt.wantOK {
				require.Contains(t, out, "2 inhibit rules", out)
				require.Contains(t, out, "2 receivers", out)
			}
		})
	}
}
