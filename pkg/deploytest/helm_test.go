package deploytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const helmValuesFile = "deploy/helm/grafana-values.yaml"

// dataSource is a provisioned data source, as both provisioning/ and the
// Helm chart's datasources value write it.
type dataSource struct {
	Name      string         `yaml:"name"`
	UID       string         `yaml:"uid"`
	Type      string         `yaml:"type"`
	Access    string         `yaml:"access"`
	URL       string         `yaml:"url"`
	IsDefault bool           `yaml:"isDefault"`
	Editable  bool           `yaml:"editable"`
	JSONData  map[string]any `yaml:"jsonData"`
	// SecureJSONData holds references to secrets (${ENV}), never secrets.
	SecureJSONData map[string]string `yaml:"secureJsonData"`
}

type dataSourceFile struct {
	DataSources []dataSource `yaml:"datasources"`
}

type dashboardProvider struct {
	Name   string `yaml:"name"`
	Folder string `yaml:"folder"`
	Type   string `yaml:"type"`
}

type helmValues struct {
	Plugins     []string                  `yaml:"plugins"`
	GrafanaIni  map[string]map[string]any `yaml:"grafana.ini"`
	DataSources map[string]dataSourceFile `yaml:"datasources"`
	Providers   map[string]struct {
		Providers []dashboardProvider `yaml:"providers"`
	} `yaml:"dashboardProviders"`
	Dashboards map[string]map[string]struct {
		URL string `yaml:"url"`
	} `yaml:"dashboards"`
	// EnvValueFrom sets Grafana's environment from Secrets (the agent token).
	EnvValueFrom map[string]struct {
		SecretKeyRef struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"envValueFrom"`
}

// pluginFacts are the id and version every install path must name.
type pluginFacts struct{ ID, Version string }

func readPluginFacts(t *testing.T) pluginFacts {
	t.Helper()
	var pj struct{ ID string }
	var pkg struct{ Version string }
	readJSON(t, "plugin.json", &pj)
	readJSON(t, "package.json", &pkg)
	return pluginFacts{ID: pj.ID, Version: pkg.Version}
}

func readJSON(t *testing.T, rel string, v any) {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, rel))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v), rel)
}

// compareDataSources lists how the Helm data source differs from the
// provisioned one. Only the Prometheus address may differ (a cluster's is not
// the compose stack's), and in each file url and jsonData.prometheusUrl agree.
func compareDataSources(prov, helm dataSource) []string {
	var diffs []string
	field := func(name string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s: provisioning has %v, Helm has %v", name, a, b))
		}
	}
	field("name", prov.Name, helm.Name)
	field("uid", prov.UID, helm.UID)
	field("type", prov.Type, helm.Type)
	field("access", prov.Access, helm.Access)
	field("isDefault", prov.IsDefault, helm.IsDefault)
	keys := map[string]bool{}
	for k := range prov.JSONData {
		keys[k] = true
	}
	for k := range helm.JSONData {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if k != "prometheusUrl" {
			field("jsonData."+k, prov.JSONData[k], helm.JSONData[k])
		}
	}
	for _, ds := range []struct {
		where string
		ds    dataSource
	}{{"provisioning", prov}, {"Helm", helm}} {
		if u, _ := ds.ds.JSONData["prometheusUrl"].(string); u != ds.ds.URL {
			diffs = append(diffs, fmt.Sprintf("%s: url %q and jsonData.prometheusUrl %q differ", ds.where, ds.ds.URL, u))
		}
	}
	return diffs
}

func vllmDataSource(t *testing.T, dss []dataSource, where string) dataSource {
	t.Helper()
	for _, ds := range dss {
		if ds.Type == readPluginFacts(t).ID {
			return ds
		}
	}
	t.Fatalf("%s provisions no data source of type %s", where, readPluginFacts(t).ID)
	return dataSource{}
}

func readHelm(t *testing.T) helmValues {
	t.Helper()
	return readHelmValues(t, helmValuesFile)
}

func readHelmValues(t *testing.T, rel string) helmValues {
	t.Helper()
	var hv helmValues
	readYAML(t, repoPath(t, rel), &hv)
	return hv
}

// TestHelmDataSourceMatchesProvisioning: the Helm values and provisioning/
// provision the same data source (uid, type, settings), so the dashboards and
// alert rules work with either.
func TestHelmDataSourceMatchesProvisioning(t *testing.T) {
	var prov dataSourceFile
	readYAML(t, repoPath(t, "provisioning/datasources/vllm.yaml"), &prov)
	hv := readHelm(t)
	helmFile, ok := hv.DataSources["datasources.yaml"]
	require.True(t, ok, "Helm values have no datasources.datasources.yaml")

	p := vllmDataSource(t, prov.DataSources, "provisioning/datasources/vllm.yaml")
	h := vllmDataSource(t, helmFile.DataSources, helmValuesFile)
	require.Empty(t, compareDataSources(p, h))
	require.Equal(t, "vllm", h.UID, "dashboards' alert rules and docs use uid vllm")

	// The comparison itself must catch drift: break each kind of field once.
	tests := []struct {
		name   string
		mutate func(*dataSource)
		want   string
	}{
		{"uid", func(d *dataSource) { d.UID = "vllm-prod" }, "uid:"},
		{"a setting", func(d *dataSource) { d.JSONData["scrapeInterval"] = "15s" }, "jsonData.scrapeInterval"},
		{"a setting only one side has", func(d *dataSource) { d.JSONData["agentUrls"] = []any{"http://x:9400"} }, "jsonData.agentUrls"},
		{"url without prometheusUrl", func(d *dataSource) { d.URL = "http://elsewhere:9090" }, "url \"http://elsewhere:9090\""},
	}
	for _, tt := range tests {
		t.Run("drift in "+tt.name+" is caught", func(t *testing.T) {
			broken := h
			broken.JSONData = map[string]any{}
			for k, v := range h.JSONData {
				broken.JSONData[k] = v
			}
			tt.mutate(&broken)
			diffs := compareDataSources(p, broken)
			require.NotEmpty(t, diffs)
			require.Contains(t, strings.Join(diffs, "\n"), tt.want)
		})
	}
}

// TestHelmInstallsThisRelease: the chart installs this version's archive by
// the plugin's id, allows it unsigned, and loads every dashboard of
// dashboards/ from this version's tag into the folder provisioning uses.
func TestHelmInstallsThisRelease(t *testing.T) {
	for _, file := range []string{helmValuesFile, helmKubernetesFile} {
		t.Run(file, func(t *testing.T) { helmInstallsThisRelease(t, readHelmValues(t, file)) })
	}
}

func helmInstallsThisRelease(t *testing.T, hv helmValues) {
	facts := readPluginFacts(t)

	require.Len(t, hv.Plugins, 1)
	url, id, ok := strings.Cut(hv.Plugins[0], ";")
	require.True(t, ok, "the chart's plugins entry must be URL;ID to install from a URL: %q", hv.Plugins[0])
	require.Equal(t, facts.ID, id)
	wantArchive := fmt.Sprintf("/v%s/%s-%s.zip", facts.Version, facts.ID, facts.Version)
	require.True(t, strings.HasPrefix(url, "https://") && strings.HasSuffix(url, wantArchive),
		"plugin URL %q must be this version's archive (…%s): bump it with package.json", url, wantArchive)

	unsigned, _ := hv.GrafanaIni["plugins"]["allow_loading_unsigned_plugins"].(string)
	require.Contains(t, strings.Split(unsigned, ","), facts.ID)

	var provDash struct {
		Providers []dashboardProvider `yaml:"providers"`
	}
	readYAML(t, repoPath(t, "provisioning/dashboards/vllm.yaml"), &provDash)
	require.Len(t, hv.Providers["dashboardproviders.yaml"].Providers, 1)
	helmProvider := hv.Providers["dashboardproviders.yaml"].Providers[0]
	require.Equal(t, provDash.Providers[0].Folder, helmProvider.Folder)

	files, err := filepath.Glob(repoPath(t, "dashboards/*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	dashboards := hv.Dashboards[helmProvider.Name]
	require.Len(t, dashboards, len(files), "one Helm dashboard per file in dashboards/")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		d, ok := dashboards[name]
		require.True(t, ok, "dashboards/%s.json is not in the Helm values", name)
		require.True(t, strings.HasSuffix(d.URL, fmt.Sprintf("/v%s/dashboards/%s.json", facts.Version, name)),
			"dashboard %s: URL %q is not this version's file", name, d.URL)
	}
}
