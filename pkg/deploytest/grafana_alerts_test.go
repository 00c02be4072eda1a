package deploytest

import (
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"
)

const grafanaAlertsFile = "provisioning/alerting/vllm-alerts.yaml"

// grafanaSummaries returns the summary template of each Grafana-managed
// rule by uid.
func grafanaSummaries(t *testing.T) map[string]string {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []struct {
				UID         string            `yaml:"uid"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, repoPath(t, grafanaAlertsFile), &f)
	out := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out[r.UID] = r.Annotations["summary"]
		}
	}
	return out
}

// renderGrafana expands an annotation as Grafana's alerting does: the
// template sees $labels, $values and $value.
func renderGrafana(t *testing.T, text string, labels map[string]string, values map[string]string) string {
	t.Helper()
	const vars = "{{- $labels := .Labels -}}{{- $values := .Values -}}{{- $value := .Value -}}"
	tmpl, err := template.New("annotation").Parse(vars + text)
	require.NoError(t, err, text)
	var b strings.Builder
	require.NoError(t, tmpl.Execute(&b, map[string]any{"Labels": labels, "Values": values, "Value": ""}))
	return b.String()
}

// TestGrafanaAlertsNameTheServer: the per-server summaries name the server
// by the labels the data source's profile groups by (instance on plain
// Prometheus, namespace/pod on Kubernetes, namespace/ReplicaId behind Ray
// Serve), never leaving the name empty.
func TestGrafanaAlertsNameTheServer(t *testing.T) {
	summaries := grafanaSummaries(t)
	values := map[string]string{"B": "70"}
	shapes := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{name: "plain Prometheus", labels: map[string]string{"instance": "10.0.0.1:8000", "engine": "0"}, want: "10.0.0.1:8000"},
		{name: "Kubernetes", labels: map[string]string{"namespace": "inference", "pod": "vllm-0", "engine": "0"}, want: "inference/vllm-0"},
		{name: "Ray Serve", labels: map[string]string{"namespace": "ray", "ReplicaId": "abc123", "engine": "0"}, want: "ray/abc123"},
	}
	want := map[string]string{
		"vllm-queue-backlog": "SERVER has 70 requests waiting",
		"vllm-wait-p99":      "Queue wait p99 on SERVER is 70s",
		"vllm-kv-cache-full": "KV cache of SERVER engine 0 is 70 full",
		"vllm-preemptions":   "SERVER preempts 70 requests per second",
	}
	for _, sh := range shapes {
		for uid, w := range want {
			t.Run(sh.name+"/"+uid, func(t *testing.T) {
				require.Contains(t, summaries, uid)
				require.Equal(t, strings.ReplaceAll(w, "SERVER", sh.want), renderGrafana(t, summaries[uid], sh.labels, values))
			})
		}
	}
}
