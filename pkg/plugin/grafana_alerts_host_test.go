package plugin_test

import (
	"fmt"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// grafanaAlertSummaries is what each Grafana-managed rule's summary must
// say once per series its query returns, with SERVER, ENGINE and MODEL
// standing for each server, data-parallel engine and model of the fleet,
// and 1 for the reduced value $values.B.
var grafanaAlertSummaries = map[string]string{
	"vllm-queue-backlog":    "SERVER has 1 requests waiting",
	"vllm-wait-p99":         "Queue wait p99 on SERVER is 1s",
	"vllm-kv-cache-full":    "KV cache of SERVER engine ENGINE is 1 full",
	"vllm-preemptions":      "SERVER preempts 1 requests per second",
	"vllm-slo-ttft-burn-1h": "MODEL burns its TTFT error budget 1x too fast (1h and 5m windows)",
	"vllm-slo-ttft-burn-6h": "MODEL burns its TTFT error budget 1x too fast (6h and 30m windows)",
}

// TestHostGrafanaAlertRules runs the queries of every Grafana-managed rule
// of provisioning/alerting/vllm-alerts.yaml through the built plugin binary
// as Grafana's alerting does (header FromAlert, the rule's 10-minute range)
// against a simulated fleet, on plain Prometheus targets (Prometheus 2,
// profile auto) and on Kubernetes-shaped ones (namespace and pod target
// labels, Prometheus 3, profile production-stack), and renders each rule's
// summary with every returned series' labels as Grafana would for the
// alert instance: each server (each engine, for the KV-cache rule; each
// model, for the SLO rules) is named exactly once, so every alert
// instance's notification says which server it is about.
func TestHostGrafanaAlertRules(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	env := fleettest.Run(t, fleettest.HotFleet(35))
	var pods []promtest.Group
	for i, addr := range env.Targets() {
		pods = append(pods, promtest.Group{Targets: []string{addr}, Labels: map[string]string{"namespace": "inference", "pod": fmt.Sprintf("vllm-%d", i)}})
	}
	shapes := []struct {
		name     string
		prom     *promtest.Server
		jsonData string
		servers  []string
	}{
		{"plain Prometheus", promtest.Start(t, promtest.Options{Targets: env.Targets()}), `{"scrapeInterval":"1s"}`, env.Targets()},
		{"Kubernetes", promtest.Start(t, promtest.Options{Groups: pods, Backend: promtest.Prometheus3}), `{"scrapeInterval":"1s","profile":"production-stack"}`,
			[]string{"inference/vllm-0", "inference/vllm-1", "inference/vllm-2", "inference/vllm-3"}},
	}
	for _, sh := range shapes {
		sh.prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 20`, 8, 90*time.Second)
	}
	rules := alertRules(t)
	require.Len(t, rules, len(grafanaAlertSummaries), "every rule has an expected summary here")
	for _, sh := range shapes {
		// One uid per data source: the plugin keeps an instance per uid.
		ds := backend.DataSourceInstanceSettings{UID: "vllm-" + sh.name, URL: sh.prom.URL, JSONData: []byte(sh.jsonData)}
		for _, rule := range rules {
			t.Run(sh.name+"/"+rule.uid, func(t *testing.T) {
				want := expandSummary(grafanaAlertSummaries[rule.uid], sh.servers, []string{"0", "1"}, fleetModels(env))
				require.NotEmpty(t, want, "no expected summary for %s", rule.uid)
				require.ElementsMatch(t, want, alertSummaries(t, host, ds, rule))
			})
		}
	}
}

// alertSummaries runs a rule's queries as Grafana's alerting does and
// renders its summary for every series: one alert instance each.
func alertSummaries(t *testing.T, host *grafanahost.Host, ds backend.DataSourceInstanceSettings, rule alertRule) []string {
	t.Helper()
	now := time.Now()
	var out []string
	for i, q := range rule.queries {
		ref := fmt.Sprintf("A%d", i)
		r := host.QueryData(t, ds, map[string]string{backend.FromAlertHeaderName: "true"}, backend.DataQuery{RefID: ref, JSON: q,
			Interval: time.Second, MaxDataPoints: 43200, TimeRange: backend.TimeRange{From: now.Add(-10 * time.Minute), To: now}}).Responses[ref]
		require.NoError(t, r.Error)
		for _, f := range r.Frames {
			require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type, "alerting reads one series per frame")
			out = append(out, renderSummary(t, rule.summary, f.Fields[1].Labels))
		}
	}
	return out
}

// renderSummary expands a summary as Grafana's alerting does for one alert
// instance: $labels are the series' labels, $values.B the reduced value.
func renderSummary(t *testing.T, text string, labels data.Labels) string {
	t.Helper()
	const vars = "{{- $labels := .Labels -}}{{- $values := .Values -}}"
	tmpl, err := template.New("summary").Option("missingkey=zero").Parse(vars + text)
	require.NoError(t, err, text)
	var b strings.Builder
	require.NoError(t, tmpl.Execute(&b, map[string]any{"Labels": map[string]string(labels), "Values": map[string]string{"B": "1"}}))
	return b.String()
}

// expandSummary is the summaries a rule must give: pattern once per
// server (and engine, where it names ENGINE), or once per model.
func expandSummary(pattern string, servers, engines, models []string) []string {
	var out []string
	switch {
	case strings.Contains(pattern, "MODEL"):
		for _, m := range models {
			out = append(out, strings.ReplaceAll(pattern, "MODEL", m))
		}
	case strings.Contains(pattern, "ENGINE"):
		for _, s := range servers {
			for _, e := range engines {
				out = append(out, strings.NewReplacer("SERVER", s, "ENGINE", e).Replace(pattern))
			}
		}
	case pattern != "":
		for _, s := range servers {
			out = append(out, strings.ReplaceAll(pattern, "SERVER", s))
		}
	}
	return out
}

// fleetModels are the fleet's distinct models.
func fleetModels(env *fleettest.Env) []string {
	var out []string
	seen := map[string]bool{}
	for _, ic := range env.Fleet.Config().Instances {
		if !seen[ic.Model] {
			seen[ic.Model] = true
			out = append(out, ic.Model)
		}
	}
	return out
}
