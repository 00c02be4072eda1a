package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// Issue 36: the generic Helm values pointed the data source at the
// prometheus-community/prometheus chart, whose own jobs are named
// kubernetes-pods and the like, so the rules' job=~"(.+/)?vllm" and the
// data source's agentJob found nothing. deploy/helm/prometheus-values.yaml
// adds the two jobs; these checks run promtool 3 on the configuration the
// chart renders from it and relabel the shipped pods through its jobs.

const prometheusChartValues = "deploy/helm/prometheus-values.yaml"

// chartPrometheusValues is the part of the chart's values the file sets.
type chartPrometheusValues struct {
	Server struct {
		ExtraSecretMounts []struct {
			MountPath  string `yaml:"mountPath"`
			SecretName string `yaml:"secretName"`
		} `yaml:"extraSecretMounts"`
		ExtraConfigmapMounts []struct {
			MountPath string `yaml:"mountPath"`
			ConfigMap string `yaml:"configMap"`
		} `yaml:"extraConfigmapMounts"`
	} `yaml:"server"`
	ServerFiles struct {
		PrometheusYML struct {
			RuleFiles []string `yaml:"rule_files"`
		} `yaml:"prometheus.yml"`
	} `yaml:"serverFiles"`
	ExtraScrapeConfigs string `yaml:"extraScrapeConfigs"`
}

// chartScrapeJob is one of the values' scrape jobs.
type chartScrapeJob struct {
	JobName       string `yaml:"job_name"`
	Authorization struct {
		CredentialsFile string `yaml:"credentials_file"`
	} `yaml:"authorization"`
	RelabelConfigs []*relabel.Config `yaml:"relabel_configs"`
}

func readChartPrometheusValues(t *testing.T) (chartPrometheusValues, map[string]chartScrapeJob) {
	t.Helper()
	var v chartPrometheusValues
	readYAML(t, repoPath(t, prometheusChartValues), &v)
	var jobs []chartScrapeJob
	require.NoError(t, yaml.Unmarshal([]byte(v.ExtraScrapeConfigs), &jobs))
	byName := map[string]chartScrapeJob{}
	for _, j := range jobs {
		byName[j.JobName] = j
	}
	return v, byName
}

// TestPrometheusChartValuesLoad: the configuration the chart renders (its
// global block at the chart's defaults, the values' rule files and scrape
// jobs) passes promtool 3's check, with the mounted rule files and token.
func TestPrometheusChartValuesLoad(t *testing.T) {
	v, _ := readChartPrometheusValues(t)
	dir := t.TempDir()
	text := v.ExtraScrapeConfigs
	// The server's mounts, made local: the token file and the rules ConfigMap.
	for _, m := range v.Server.ExtraSecretMounts {
		local := filepath.Join(dir, m.SecretName)
		require.NoError(t, os.MkdirAll(local, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(local, "token"), []byte("t"), 0o600))
		text = strings.ReplaceAll(text, m.MountPath, local)
	}
	var rules []string
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "config"), 0o755))
	for _, f := range v.ServerFiles.PrometheusYML.RuleFiles {
		local := filepath.Join(dir, "config", strings.TrimPrefix(f, "/etc/config/"))
		if strings.HasPrefix(f, "/etc/config/vllm-rules/") {
			copyRuleFiles(t, filepath.Dir(local))
		} else { // the chart's own files, empty by default
			require.NoError(t, os.WriteFile(local, []byte("groups: []\n"), 0o644))
		}
		rules = append(rules, local)
	}
	cfg := "global:\n  scrape_interval: 1m\n  scrape_timeout: 10s\n  evaluation_interval: 1m\nrule_files:\n"
	for _, r := range rules {
		cfg += "  - " + r + "\n"
	}
	cfg += "scrape_configs:\n" + indent(text, "  ")
	path := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	out, ok := runTool(t, dir, promtest.Promtool3Binary(t), "check", "config", path)
	require.True(t, ok, "promtool check config:\n%s\n%s", out, cfg)
	for _, f := range []string{"vllm.rules.yml", "vllm-recording.rules.yml", "vllm-slo.rules.yml", "vllm-capacity.rules.yml"} {
		require.Contains(t, out, f, "the rules ConfigMap's files are loaded")
	}
	require.NotRegexp(t, `(?m)^\s*WARNING`, out)
}

// copyRuleFiles writes the rule files the documented ConfigMap holds into dir.
func copyRuleFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	raw, err := os.ReadFile(repoPath(t, prometheusChartValues))
	require.NoError(t, err)
	files := regexp.MustCompile(`--from-file=(deploy/prometheus/rules/[a-z-]+\.rules\.yml)`).FindAllStringSubmatch(string(raw), -1)
	require.Len(t, files, 4, "the ConfigMap command names the four rule files")
	for _, f := range files {
		data, err := os.ReadFile(repoPath(t, f[1]))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f[1])), data, 0o644))
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// podMeta is what kubernetes_sd gives one container port of a running pod.
func podMeta(namespace, name string, podLabels map[string]string, container, port string) labels.Labels {
	b := labels.NewBuilder(labels.EmptyLabels())
	b.Set("__address__", "10.0.0.1:9")
	b.Set("__meta_kubernetes_namespace", namespace)
	b.Set("__meta_kubernetes_pod_name", name)
	b.Set("__meta_kubernetes_pod_phase", "Running")
	b.Set("__meta_kubernetes_pod_node_name", "gpu-node-1")
	b.Set("__meta_kubernetes_pod_container_name", container)
	b.Set("__meta_kubernetes_pod_container_port_name", port)
	for k, v := range podLabels {
		b.Set("__meta_kubernetes_pod_label_"+regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(k, "_"), v)
	}
	return b.Labels()
}

// TestPrometheusChartJobsFindTheFleet: the shipped vLLM pods (the PodMonitor
// example's labels and port) and node agents (the DaemonSet's) go through the
// jobs the rules and agentJob name, each keeping only its own pods, with the
// namespace and pod labels; the agents' token is the documented Secret's.
func TestPrometheusChartJobsFindTheFleet(t *testing.T) {
	v, jobs := readChartPrometheusValues(t)
	m := readManifests(t)
	vllmJob, agentJob := jobs["vllm"], jobs[models.DefaultAgentJob]
	require.Regexp(t, `^(.+/)?vllm$`, vllmJob.JobName, "the alert rules' job")
	require.Equal(t, models.DefaultAgentJob, agentJob.JobName, "the data source's default agentJob")

	ds := m.daemonSet
	agentPod := podMeta(ds.Namespace, "vllm-node-agent-x1", ds.Spec.Template.Labels, "vllm-node-agent", agentContainer(t, ds).Ports[0].Name)
	vllmPod := podMeta(m.vllmPM.Namespace, "vllm-0", m.vllmPM.Spec.Selector.MatchLabels, "vllm", *m.vllmPM.Spec.PodMetricsEndpoints[0].Port)
	other := podMeta("default", "web-0", map[string]string{"app": "web"}, "web", "http")
	for _, job := range jobs {
		for _, c := range job.RelabelConfigs {
			require.NoError(t, c.Validate(model.UTF8Validation), job.JobName)
		}
	}
	kept := func(job chartScrapeJob, pod labels.Labels) (labels.Labels, bool) {
		lb := labels.NewBuilder(pod)
		ok := relabel.ProcessBuilder(lb, job.RelabelConfigs...)
		return lb.Labels(), ok
	}
	for _, tc := range []struct {
		name string
		job  chartScrapeJob
		pod  labels.Labels
		keep bool
	}{
		{"vLLM pod in vllm", vllmJob, vllmPod, true}, {"agent in vllm", vllmJob, agentPod, false}, {"other in vllm", vllmJob, other, false},
		{"agent in agents", agentJob, agentPod, true}, {"vLLM pod in agents", agentJob, vllmPod, false}, {"other in agents", agentJob, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := kept(tc.job, tc.pod)
			require.Equal(t, tc.keep, ok)
			if ok {
				require.Equal(t, tc.pod.Get("__meta_kubernetes_namespace"), got.Get("namespace"))
				require.Equal(t, tc.pod.Get("__meta_kubernetes_pod_name"), got.Get("pod"))
			}
		})
	}

	sec := documentedTokenSecret(t)
	var mount string
	for _, sm := range v.Server.ExtraSecretMounts {
		if sm.SecretName == sec.name {
			mount = sm.MountPath
		}
	}
	require.NotEmpty(t, mount, "the server mounts the agents' token Secret %s", sec.name)
	require.Equal(t, mount+"/"+sec.key, agentJob.Authorization.CredentialsFile, "the agents' job sends that token")
}
