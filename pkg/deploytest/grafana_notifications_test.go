package deploytest

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"
)

// Issue 36: the Grafana-managed rules shipped without a contact point or a
// policy, so Grafana sent their alerts to its default contact point, and no
// Helm values provisioned them. The rules now name their contact point
// (simplified routing: no policy tree of the admin's is replaced), and the
// Helm values carry both files, escaped for the chart's tpl.

const grafanaContactPointsFile = "provisioning/alerting/vllm-contact-points.yaml"

// grafanaContactPoints is the part of a contact-points file checked here.
type grafanaContactPoints struct {
	ContactPoints []struct {
		Name      string `yaml:"name"`
		Receivers []struct {
			UID      string            `yaml:"uid"`
			Type     string            `yaml:"type"`
			Settings map[string]string `yaml:"settings"`
		} `yaml:"receivers"`
	} `yaml:"contactPoints"`
}

// grafanaRuleRouting is each rule's notification settings.
type grafanaRuleRouting struct {
	Groups []struct {
		Rules []struct {
			UID                  string `yaml:"uid"`
			NotificationSettings *struct {
				Receiver string   `yaml:"receiver"`
				GroupBy  []string `yaml:"group_by"`
			} `yaml:"notification_settings"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// receiverUID is Grafana's rule for a provisioned receiver's uid.
var receiverUID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// TestGrafanaNotificationsRoute: every Grafana-managed rule names the
// provisioned contact point, groups as Grafana requires and as the example
// Alertmanager does, and the contact point is the compose stack's Alertmanager.
func TestGrafanaNotificationsRoute(t *testing.T) {
	var cps grafanaContactPoints
	readYAML(t, repoPath(t, grafanaContactPointsFile), &cps)
	names := map[string]bool{}
	for _, cp := range cps.ContactPoints {
		names[cp.Name] = true
		require.NotEmpty(t, cp.Receivers, cp.Name)
		for _, r := range cp.Receivers {
			require.Regexp(t, receiverUID, r.UID)
			require.Equal(t, "prometheus-alertmanager", r.Type, "alerts go to Alertmanager, which routes by severity")
			u, err := url.Parse(r.Settings["url"])
			require.NoError(t, err)
			require.Equal(t, "alertmanager:9093", u.Host, "the compose stack's Alertmanager service")
		}
	}
	svc := loadCompose(t).service(t, "alertmanager")
	require.Contains(t, svc.Image, "alertmanager")

	var am amConfig
	readYAML(t, repoPath(t, alertmanagerFile), &am)
	var rules grafanaRuleRouting
	readYAML(t, repoPath(t, grafanaAlertsFile), &rules)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			ns := r.NotificationSettings
			require.NotNil(t, ns, "%s names no contact point: Grafana would send it to the default one", r.UID)
			require.True(t, names[ns.Receiver], "%s: contact point %q is not provisioned", r.UID, ns.Receiver)
			require.Subset(t, ns.GroupBy, []string{"alertname", "grafana_folder"}, "%s: Grafana requires both", r.UID)
			for _, l := range am.Route.GroupBy {
				require.Contains(t, ns.GroupBy, l, "%s: grouped per server as the Alertmanager example is", r.UID)
			}
		}
	}
	require.Equal(t, 6, n)
}

// renderLikeTpl renders a values string as the chart's tpl does (Go's
// text/template, no data): the escaped {{`{{`}} prints "{{".
func renderLikeTpl(s string) (string, error) {
	tmpl, err := template.New("values").Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = tmpl.Execute(&b, nil)
	return b.String(), err
}

// renderedEqual walks the values' tree against provisioning's: strings as
// tpl renders them equal, everything else equal, but at the skip path.
func renderedEqual(t *testing.T, path string, values, want any, skip string) {
	t.Helper()
	if path == skip {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		v, ok := values.(map[string]any)
		require.True(t, ok, "%s: want a map", path)
		require.ElementsMatch(t, slices.Collect(maps.Keys(w)), slices.Collect(maps.Keys(v)), path)
		for k := range w {
			renderedEqual(t, path+"."+k, v[k], w[k], skip)
		}
	case []any:
		v, ok := values.([]any)
		require.True(t, ok, "%s: want a list", path)
		require.Len(t, v, len(w), path)
		for i := range w {
			renderedEqual(t, fmt.Sprintf("%s[%d]", path, i), v[i], w[i], skip)
		}
	case string:
		s, ok := values.(string)
		require.True(t, ok, "%s: want a string", path)
		got, err := renderLikeTpl(s)
		require.NoError(t, err, "%s: Helm's tpl fails on it", path)
		require.Equal(t, w, got, path)
	default:
		require.Equal(t, want, values, path)
	}
}

// TestHelmProvisionsGrafanaNotifications: each Helm values file provisions
// provisioning/alerting/'s rules and contact point, which the chart's tpl
// renders back to those files but for the Alertmanager URL (the cluster's).
func TestHelmProvisionsGrafanaNotifications(t *testing.T) {
	want := map[string]any{}
	for _, f := range []string{grafanaAlertsFile, grafanaContactPointsFile} {
		var v any
		readYAML(t, repoPath(t, f), &v)
		want[f[strings.LastIndex(f, "/")+1:]] = v
	}
	for _, file := range []string{helmValuesFile, helmKubernetesFile} {
		t.Run(file, func(t *testing.T) {
			tree := readValuesTree(t, file)
			renderedEqual(t, "alerting", tree["alerting"], want,
				"alerting.vllm-contact-points.yaml.contactPoints[0].receivers[0].settings.url")
			cp := tree["alerting"].(map[string]any)["vllm-contact-points.yaml"].(map[string]any)
			u := cp["contactPoints"].([]any)[0].(map[string]any)["receivers"].([]any)[0].(map[string]any)["settings"].(map[string]any)["url"]
			require.Regexp(t, `^http://[a-z0-9.-]+\.monitoring\.svc:9093$`, u, "an Alertmanager in the cluster")
		})
	}
	// Why the values escape: unescaped, the rules' own templates break tpl.
	_, err := renderLikeTpl(`{{ $labels.model_name }} burns`)
	require.Error(t, err, "tpl would run a Grafana template as its own")
}
