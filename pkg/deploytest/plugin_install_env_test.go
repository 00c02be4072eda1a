package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const thisPluginID = "inferops-vllm-datasource"

// installPluginsEntry is how Grafana reads one GF_INSTALL_PLUGINS entry
// (migrateInstallPluginsToPreinstallPluginsSync in Grafana's
// pkg/setting/setting_plugins.go): [URL;]id[ version].
var installPluginsEntry = regexp.MustCompile(`(?:([^;]+);)?([^;\s]+)(?:\s+(.+))?`)

// installPluginsIDs are the plugin ids Grafana finds in a GF_INSTALL_PLUGINS value.
func installPluginsIDs(value string) []string {
	var ids []string
	for _, e := range strings.Split(value, ",") {
		if m := installPluginsEntry.FindStringSubmatch(strings.TrimSpace(e)); m != nil && m[2] != "" {
			ids = append(ids, strings.TrimSpace(m[2]))
		}
	}
	return ids
}

// preinstallIDs are the plugin ids Grafana finds in a GF_PLUGINS_PREINSTALL
// or _SYNC value (processPreinstallPlugins, same file): id[@version[@url]].
func preinstallIDs(value string) []string {
	var ids []string
	for _, e := range strings.Split(value, ",") {
		if e = strings.TrimSpace(e); e != "" {
			ids = append(ids, strings.Split(e, "@")[0])
		}
	}
	return ids
}

func TestPluginInstallParsers(t *testing.T) {
	tests := []struct {
		name, value string
		parse       func(string) []string
		want        []string
	}{
		{"URL;id", "https://x/p.zip;" + thisPluginID, installPluginsIDs, []string{thisPluginID}},
		{"id version", thisPluginID + " 0.2.0", installPluginsIDs, []string{thisPluginID}},
		{"the @ form under GF_INSTALL_PLUGINS is one id", thisPluginID + "@0.2.0@https://x/p.zip", installPluginsIDs,
			[]string{thisPluginID + "@0.2.0@https://x/p.zip"}},
		{"id@version@url", thisPluginID + "@0.2.0@https://x/p.zip", preinstallIDs, []string{thisPluginID}},
		{"URL;id under preinstall is one id", "https://x/p.zip;" + thisPluginID, preinstallIDs, []string{"https://x/p.zip;" + thisPluginID}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.parse(tt.value), tt.name)
	}
}

// envAssignment finds VAR="value" or VAR=value in shell and YAML snippets.
var envAssignment = regexp.MustCompile(`(GF_INSTALL_PLUGINS|GF_PLUGINS_PREINSTALL_SYNC|GF_PLUGINS_PREINSTALL)=("([^"]*)"|([^\s` + "`" + `]+))`)

// TestDocumentedPluginInstallEntries: every GF_INSTALL_PLUGINS and
// GF_PLUGINS_PREINSTALL(_SYNC) value the docs, the READMEs and deploy/
// give installs this plugin's id under that variable's own syntax.
func TestDocumentedPluginInstallEntries(t *testing.T) {
	var files []string
	for _, glob := range []string{"README.md", "src/README.md", "docs/*.md", "deploy/*/*", "docker-compose.yaml"} {
		m, err := filepath.Glob(repoPath(t, glob))
		require.NoError(t, err)
		files = append(files, m...)
	}
	seen := map[string]int{}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range envAssignment.FindAllStringSubmatch(string(raw), -1) {
			value := m[3] + m[4]
			if !strings.Contains(value, thisPluginID) {
				continue // another plugin, or a placeholder with no id
			}
			parse := preinstallIDs
			if m[1] == "GF_INSTALL_PLUGINS" {
				parse = installPluginsIDs
			}
			require.Contains(t, parse(value), thisPluginID, "%s: %s=%s does not install %s under that variable's syntax", f, m[1], value, thisPluginID)
			seen[m[1]]++
		}
	}
	require.Positive(t, seen["GF_INSTALL_PLUGINS"], "docs/install.md gives a GF_INSTALL_PLUGINS example")
	require.Positive(t, seen["GF_PLUGINS_PREINSTALL_SYNC"], "the README and docs give GF_PLUGINS_PREINSTALL_SYNC examples")
}
