package deploytest

import (
	"fmt"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

// The scrape intervals of the Prometheus each shipped data source targets,
// when nothing overrides them (issue 36, error 4):
//   - prometheus-community/prometheus: server.global.scrape_interval: 1m in
//     the chart's charts/prometheus/values.yaml;
//   - kube-prometheus-stack: prometheus.prometheusSpec.scrapeInterval is ""
//     in its values, which prometheus-operator reads as its default 30s
//     (Prometheus CRD: scrapeInterval, Default: "30s"); a PodMonitor
//     endpoint's interval overrides it for its targets.
const (
	prometheusChartScrapeInterval = time.Minute
	operatorScrapeInterval        = 30 * time.Second
)

// scrapeIntervalSetting is a data source's jsonData.scrapeInterval, parsed
// as the backend parses it.
func scrapeIntervalSetting(t *testing.T, d dataSource) time.Duration {
	t.Helper()
	raw, ok := d.JSONData["scrapeInterval"].(string)
	require.True(t, ok, "data source %s sets no scrapeInterval", d.Name)
	iv, err := interval.ParseDuration(raw)
	require.NoError(t, err)
	return iv
}

// podMonitorInterval is how often prometheus-operator scrapes a
// PodMonitor's first endpoint: its interval, else the Prometheus default.
func podMonitorInterval(t *testing.T, pm monitoringv1.PodMonitor) time.Duration {
	t.Helper()
	require.NotEmpty(t, pm.Spec.PodMetricsEndpoints)
	raw := string(pm.Spec.PodMetricsEndpoints[0].Interval)
	if raw == "" {
		return operatorScrapeInterval
	}
	d, err := model.ParseDuration(raw)
	require.NoError(t, err)
	return time.Duration(d)
}

// promConfigInterval is the global scrape_interval of a Prometheus config
// file, or the vllm job's own when it sets one.
func promConfigInterval(t *testing.T, rel string) time.Duration {
	t.Helper()
	var cfg struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
		ScrapeConfigs []struct {
			JobName        string `yaml:"job_name"`
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, repoPath(t, rel), &cfg)
	raw := cfg.Global.ScrapeInterval
	for _, j := range cfg.ScrapeConfigs {
		if j.JobName == "vllm" && j.ScrapeInterval != "" {
			raw = j.ScrapeInterval
		}
	}
	require.NotEmpty(t, raw, "%s sets no scrape interval", rel)
	d, err := model.ParseDuration(raw)
	require.NoError(t, err)
	return time.Duration(d)
}

// scrapeIntervalMismatch says how a setting differs from the real
// interval, or "" when they are equal.
func scrapeIntervalMismatch(where string, setting, real time.Duration, source string) string {
	if setting == real {
		return ""
	}
	return fmt.Sprintf("%s: scrapeInterval %s, but %s scrapes the vLLM series every %s: $__rate_interval would be wrong (rate panels empty when too short)",
		where, setting, source, real)
}

// TestScrapeIntervalsMatchTheirPrometheus: each shipped data source's
// scrapeInterval is how often the Prometheus it targets scrapes vLLM: the
// generic Helm values the prometheus-community/prometheus chart's default,
// the Kubernetes ones the vLLM PodMonitor's interval (kube-prometheus-stack),
// provisioning/ the compose stack's Prometheus config.
func TestScrapeIntervalsMatchTheirPrometheus(t *testing.T) {
	m := readManifests(t)
	var prov dataSourceFile
	readYAML(t, repoPath(t, "provisioning/datasources/vllm.yaml"), &prov)
	generic := vllmDataSource(t, readHelm(t).DataSources["datasources.yaml"].DataSources, helmValuesFile)
	kube := vllmDataSource(t, readHelmValues(t, helmKubernetesFile).DataSources["datasources.yaml"].DataSources, helmKubernetesFile)
	compose := vllmDataSource(t, prov.DataSources, "provisioning/datasources/vllm.yaml")
	require.Equal(t, promConfigInterval(t, "deploy/prometheus/prometheus.yml"), promConfigInterval(t, "deploy/prometheus/prometheus.compose.yml"))

	tests := []struct {
		where   string
		setting time.Duration
		real    time.Duration
		source  string
	}{
		{helmValuesFile, scrapeIntervalSetting(t, generic), prometheusChartScrapeInterval, "prometheus-community/prometheus (server.global.scrape_interval)"},
		{helmKubernetesFile, scrapeIntervalSetting(t, kube), podMonitorInterval(t, m.vllmPM), "kube-prometheus-stack through deploy/kubernetes/vllm-podmonitor.yaml"},
		{"provisioning/datasources/vllm.yaml", scrapeIntervalSetting(t, compose), promConfigInterval(t, "deploy/prometheus/prometheus.compose.yml"), "deploy/prometheus/prometheus.compose.yml"},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			require.Empty(t, scrapeIntervalMismatch(tt.where, tt.setting, tt.real, tt.source))
		})
	}

	// The check fails the mistakes it is for.
	noInterval := m.vllmPM.DeepCopy()
	noInterval.Spec.PodMetricsEndpoints[0].Interval = ""
	mistakes := []struct {
		name          string
		setting, real time.Duration
	}{
		{"0.2.0's generic values: 5s against the chart's 1m", 5 * time.Second, prometheusChartScrapeInterval},
		{"the Kubernetes values if the PodMonitor lost its interval (operator default 30s)", scrapeIntervalSetting(t, kube), podMonitorInterval(t, *noInterval)},
	}
	for _, tt := range mistakes {
		t.Run("check: "+tt.name, func(t *testing.T) {
			require.Contains(t, scrapeIntervalMismatch("x", tt.setting, tt.real, "y"), "scrapeInterval")
		})
	}
}
