package deploytest

import (
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 36: an air-gapped install had no path (the values files download
// the plugin and the dashboards at pod start). The image built from
// grafana-airgapped.Dockerfile holds the plugin, whose archive holds the
// dashboards; these checks keep the values, the Dockerfile and the release
// pointing at the same folders.

const (
	airgappedValuesFile = "deploy/helm/grafana-values-airgapped.yaml"
	airgappedDockerfile = "deploy/docker/grafana-airgapped.Dockerfile"
)

// downloads lists what makes the chart fetch at pod start.
func downloads(v map[string]any) []string {
	var out []string
	if _, ok := v["plugins"]; ok {
		out = append(out, "plugins (installed from a URL or the catalogue)")
	}
	if _, ok := v["dashboards"]; ok {
		out = append(out, "dashboards (fetched by URL or gnetId)")
	}
	return out
}

// TestAirgappedValuesDownloadNothing: the air-gapped values use only chart
// keys, make the chart fetch nothing, provision the generic values' data
// source, and read the plugin and its dashboards where the image holds them.
func TestAirgappedValuesDownloadNothing(t *testing.T) {
	tree := readValuesTree(t, airgappedValuesFile)
	require.Empty(t, unknownChartKeys(readChartKeys(t), tree), "keys the chart does not read")
	require.Empty(t, downloads(tree))
	require.NotEmpty(t, downloads(readValuesTree(t, helmValuesFile)), "the check sees the generic values' downloads")
	raw, err := os.ReadFile(repoPath(t, airgappedValuesFile))
	require.NoError(t, err)
	require.NotRegexp(t, `(?m)^[^#]*https?://(github|raw\.githubusercontent|grafana)\.`, string(raw), "no URL to the internet")

	hv := readHelmValues(t, airgappedValuesFile)
	generic := vllmDataSource(t, readHelm(t).DataSources["datasources.yaml"].DataSources, helmValuesFile)
	air := vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, airgappedValuesFile)
	require.Empty(t, compareDataSources(generic, air), "the same data source as grafana-values.yaml")

	plugins, _ := hv.GrafanaIni["paths"]["plugins"].(string)
	id := readPluginFacts(t).ID
	require.Equal(t, id, hv.GrafanaIni["plugins"]["allow_loading_unsigned_plugins"])
	docker := dockerfileFacts(t)
	require.Equal(t, docker.pluginsDir, plugins, "the chart's plugins path is the image's")
	require.Equal(t, path.Join(docker.pluginsDir, id), docker.copiedTo, "the image holds the plugin's folder there")
	providers := hv.Providers["dashboardproviders.yaml"].Providers
	require.Len(t, providers, 1)
	require.Equal(t, path.Join(plugins, id, "dashboards"), providers[0].Options.Path, "dashboards from the plugin's folder")
}

// airgappedImage is what the Dockerfile does with the plugin.
type airgappedImage struct{ grafana, copiedTo, pluginsDir, from string }

func dockerfileFacts(t *testing.T) airgappedImage {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, airgappedDockerfile))
	require.NoError(t, err)
	s := string(raw)
	find := func(re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		require.NotNil(t, m, "%s: %s", airgappedDockerfile, re)
		return m[1]
	}
	return airgappedImage{
		grafana:    find(`(?m)^ARG GRAFANA_VERSION=(\S+)$`),
		from:       find(`(?m)^COPY (?:--chown=\S+ )?(\S+) \S+$`),
		copiedTo:   find(`(?m)^COPY (?:--chown=\S+ )?\S+ (\S+)$`),
		pluginsDir: find(`GF_PATHS_PLUGINS=(\S+)`),
	}
}

// TestAirgappedImageIsTheTestedGrafana: the image starts from the Grafana
// the compose stack runs, copies the archive's top folder (the plugin id),
// allows that id unsigned, and its documented tag names this release.
func TestAirgappedImageIsTheTestedGrafana(t *testing.T) {
	img := dockerfileFacts(t)
	grafana := loadCompose(t).service(t, "grafana").Image
	require.Equal(t, "grafana/grafana:"+img.grafana, grafana, "the version the compose stack runs")
	id, version := readPluginFacts(t).ID, readPluginFacts(t).Version
	require.Equal(t, id, img.from, "the archive's top folder is the plugin id")
	raw, err := os.ReadFile(repoPath(t, airgappedDockerfile))
	require.NoError(t, err)
	require.Contains(t, string(raw), "GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS="+id)
	require.Contains(t, string(raw), "unzip "+id+"-"+version+".zip")
	tag := img.grafana + "-" + version
	require.Contains(t, string(raw), ":"+tag+" .", "the build names Grafana's version and the release")
	hv := readValuesTree(t, airgappedValuesFile)
	require.Equal(t, tag, hv["image"].(map[string]any)["tag"], "the values run that image")
	require.True(t, strings.HasPrefix(readPluginDashboardPath(t), "dashboards/"), "the archive's dashboards sit in dashboards/")
}

// readPluginDashboardPath is plugin.json's first dashboard include's path.
func readPluginDashboardPath(t *testing.T) string {
	t.Helper()
	var pj struct {
		Includes []struct{ Type, Path string }
	}
	readYAML(t, repoPath(t, "plugin.json"), &pj) // JSON is YAML
	for _, inc := range pj.Includes {
		if inc.Type == "dashboard" {
			return inc.Path
		}
	}
	t.Fatal("plugin.json includes no dashboard")
	return ""
}
