package deploytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
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
	Name    string `yaml:"name"`
	Folder  string `yaml:"folder"`
	Type    string `yaml:"type"`
	Options struct {
		Path string `yaml:"path"`
	} `yaml:"options"`
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
// provisioned one. Only the Prometheus address and the scrape interval may
// differ (a cluster's Prometheus is not the compose stack's;
// TestScrapeIntervalsMatchTheirPrometheus checks each interval against its
// own), and in each file url and jsonData.prometheusUrl agree.
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
		if k != "prometheusUrl" && k != "scrapeInterval" {
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
		{"a setting", func(d *dataSource) { d.JSONData["queryTimeout"] = "15s" }, "jsonData.queryTimeout"},
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
	entry, err := parsePluginEntry(hv.Plugins[0])
	require.NoError(t, err)
	require.Equal(t, facts.ID, entry.ID)
	require.Equal(t, facts.Version, entry.Version, "plugins entry %q: bump it with package.json", hv.Plugins[0])
	wantArchive := fmt.Sprintf("/v%s/%s-%s.zip", facts.Version, facts.ID, facts.Version)
	require.True(t, strings.HasSuffix(entry.URL, wantArchive),
		"plugin URL %q must be this version's archive (…%s): bump it with package.json", entry.URL, wantArchive)

	unsigned, _ := hv.GrafanaIni["plugins"]["allow_loading_unsigned_plugins"].(string)
	require.Contains(t, strings.Split(unsigned, ","), facts.ID)

	var provDash struct {
		Providers []dashboardProvider `yaml:"providers"`
	}
	readYAML(t, repoPath(t, "provisioning/dashboards/vllm.yaml"), &provDash)
	// The chart's download script reads the providers of the file named
	// dashboardproviders.yaml and writes each provider's dashboards to its path.
	require.Len(t, hv.Providers["dashboardproviders.yaml"].Providers, 1)
	helmProvider := hv.Providers["dashboardproviders.yaml"].Providers[0]
	require.Equal(t, provDash.Providers[0].Folder, helmProvider.Folder)
	require.Equal(t, "/var/lib/grafana/dashboards/"+helmProvider.Name, helmProvider.Options.Path,
		"the chart downloads provider %s's dashboards to /var/lib/grafana/dashboards/%s", helmProvider.Name, helmProvider.Name)

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

// chartKeysFile lists the Grafana chart's keys (see its header).
const chartKeysFile = "pkg/deploytest/testdata/grafana-chart-keys.txt"

// chartKeys are key path patterns of the Grafana chart: segments split on
// "/", "*" for a key the user names, a last "**" for anything below.
type chartKeys [][]string

func readChartKeys(t *testing.T) chartKeys {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, chartKeysFile))
	require.NoError(t, err)
	var keys chartKeys
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		keys = append(keys, strings.Split(line, "/"))
	}
	require.NotEmpty(t, keys, "%s lists no keys", chartKeysFile)
	return keys
}

// knows reports whether the chart reads the key path.
func (k chartKeys) knows(path []string) bool {
	for _, pattern := range k {
		if matchKeyPath(pattern, path) {
			return true
		}
	}
	return false
}

func matchKeyPath(pattern, path []string) bool {
	for i, seg := range pattern {
		if seg == "**" { // the key itself, or anything below it
			return i <= len(path)
		}
		if i == len(path) || seg != "*" && seg != path[i] {
			return false
		}
	}
	return len(pattern) == len(path)
}

// valueKeyPaths lists the key path of every leaf of a decoded values file:
// a scalar, a list (whose items are not keys) or an empty map.
func valueKeyPaths(v any, prefix []string) [][]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return [][]string{prefix}
	}
	var out [][]string
	for k, child := range m {
		out = append(out, valueKeyPaths(child, append(append([]string(nil), prefix...), k))...)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], "/") < strings.Join(out[j], "/") })
	return out
}

// unknownChartKeys lists the key paths of values that the chart does not read.
func unknownChartKeys(keys chartKeys, values map[string]any) []string {
	var unknown []string
	for _, p := range valueKeyPaths(values, nil) {
		if !keys.knows(p) {
			unknown = append(unknown, strings.Join(p, "/"))
		}
	}
	return unknown
}

func readValuesTree(t *testing.T, rel string) map[string]any {
	t.Helper()
	var v map[string]any
	readYAML(t, repoPath(t, rel), &v)
	require.NotEmpty(t, v, "%s is empty", rel)
	return v
}

// TestHelmValuesUseChartKeys: every key the Helm values files set is one the
// Grafana chart (grafana-community/helm-charts) reads, so none is silently
// ignored; a misspelt or moved key fails.
func TestHelmValuesUseChartKeys(t *testing.T) {
	keys := readChartKeys(t)
	for _, file := range []string{helmValuesFile, helmKubernetesFile} {
		t.Run(file, func(t *testing.T) {
			require.Empty(t, unknownChartKeys(keys, readValuesTree(t, file)),
				"keys the chart does not read (%s lists the ones it does)", chartKeysFile)
		})
	}
	tests := []struct {
		name   string
		values string
		want   []string
	}{
		{"known keys", "plugins: [a]\ngrafana.ini: {plugins: {allow_loading_unsigned_plugins: a}}\ndashboards: {p: {d: {url: u}}}\n", nil},
		{"pass-through subtree", "image: {registry: r, tag: t}\n", nil},
		{"misspelt top-level key", "plugin: [a]\n", []string{"plugin"}},
		{"misspelt ini section", "grafana.ini: {plugin: {allow_loading_unsigned_plugins: a}}\n", []string{"grafana.ini/plugin/allow_loading_unsigned_plugins"}},
		{"dashboard key the chart ignores", "dashboards: {p: {d: {link: u}}}\n", []string{"dashboards/p/d/link"}},
		{"envValueFrom without a source", "envValueFrom: {TOKEN: {secretRef: {name: s}}}\n", []string{"envValueFrom/TOKEN/secretRef/name"}},
		{"a pass-through key itself", "image: {}\n", nil},
	}
	for _, tt := range tests {
		t.Run("check: "+tt.name, func(t *testing.T) {
			var v map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(tt.values), &v))
			require.Equal(t, tt.want, unknownChartKeys(keys, v))
		})
	}
}

// pluginEntry is one item of the chart's plugins list, which the chart
// passes to Grafana as GF_PLUGINS_PREINSTALL_SYNC.
type pluginEntry struct{ ID, Version, URL string }

// parsePluginEntry reads an id@version@url entry: the form Grafana's
// preinstall installs from a URL. Anything else (the old "URL;id") is an
// error, because Grafana would read it as a plugin id and fail to start.
func parsePluginEntry(s string) (pluginEntry, error) {
	parts := strings.Split(s, "@")
	if len(parts) != 3 {
		return pluginEntry{}, fmt.Errorf("plugins entry %q: want id@version@url (%d parts split on @, want 3)", s, len(parts))
	}
	e := pluginEntry{ID: parts[0], Version: parts[1], URL: parts[2]}
	switch {
	case !pluginIDRe.MatchString(e.ID):
		return pluginEntry{}, fmt.Errorf("plugins entry %q: id %q is not a plugin id", s, e.ID)
	case !semverRe.MatchString(e.Version):
		return pluginEntry{}, fmt.Errorf("plugins entry %q: version %q is not MAJOR.MINOR.PATCH", s, e.Version)
	case !strings.HasPrefix(e.URL, "https://") || !strings.HasSuffix(e.URL, ".zip"):
		return pluginEntry{}, fmt.Errorf("plugins entry %q: url %q is not an https:// .zip", s, e.URL)
	}
	return e, nil
}

var (
	pluginIDRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	semverRe   = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
)

func TestParsePluginEntry(t *testing.T) {
	tests := []struct {
		name, entry string
		want        pluginEntry
		wantErr     string
	}{
		{"id@version@url", "my-ds@1.2.3@https://h/r/v1.2.3/my-ds-1.2.3.zip", pluginEntry{"my-ds", "1.2.3", "https://h/r/v1.2.3/my-ds-1.2.3.zip"}, ""},
		{"old URL;id form", "https://h/r/my-ds-1.2.3.zip;my-ds", pluginEntry{}, "want id@version@url"},
		{"id only", "my-ds", pluginEntry{}, "want id@version@url"},
		{"id@version", "my-ds@1.2.3", pluginEntry{}, "want id@version@url"},
		{"version not semver", "my-ds@latest@https://h/x.zip", pluginEntry{}, "not MAJOR.MINOR.PATCH"},
		{"plain http", "my-ds@1.2.3@http://h/x.zip", pluginEntry{}, "not an https://"},
		{"url with @", "my-ds@1.2.3@https://u@h/x.zip", pluginEntry{}, "4 parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePluginEntry(tt.entry)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestHelmValuesNameGrafanaVersions: each values file says which Grafana
// versions its install path needs, and that is what the chart runs.
func TestHelmValuesNameGrafanaVersions(t *testing.T) {
	for _, file := range []string{helmValuesFile, helmKubernetesFile} {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(repoPath(t, file))
			require.NoError(t, err)
			for _, want := range []string{"grafana-community", "12.1", "11.6"} {
				require.True(t, strings.Contains(string(raw), want), "%s must name %s", file, want)
			}
		})
	}
}
