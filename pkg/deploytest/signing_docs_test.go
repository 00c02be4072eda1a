package deploytest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 36: the install tables offered a private signature as an install
// path, but Grafana accepts a signature only from the org whose slug
// begins the plugin id, so no admin outside that org can sign this plugin.

// installTables are the docs' tables of install paths, by their header row.
var installTables = map[string]string{
	"README.md":       "| path | how | Grafana |",
	"docs/install.md": "| install path | Grafana versions |",
}

// tableRows is the markdown table that starts at header: its rows, header included.
func tableRows(t *testing.T, doc, header string) []string {
	t.Helper()
	i := strings.Index(doc, header)
	require.GreaterOrEqual(t, i, 0, "table %q", header)
	var rows []string
	for _, line := range strings.Split(doc[i:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows = append(rows, line)
	}
	return rows
}

// TestSigningIsNoInstallPath: no install table offers signing, and the
// install guide names the one org that can sign, the plugin id's prefix.
func TestSigningIsNoInstallPath(t *testing.T) {
	for file, header := range installTables {
		raw, err := os.ReadFile(repoPath(t, file))
		require.NoError(t, err)
		rows := tableRows(t, string(raw), header)
		require.Greater(t, len(rows), 3, "%s: the table has its rows", file)
		for _, row := range rows {
			require.NotContains(t, strings.ToLower(row), "sign", "%s offers signing as an install path", file)
		}
	}
	raw, err := os.ReadFile(repoPath(t, "plugin.json"))
	require.NoError(t, err)
	var pj struct{ ID string }
	require.NoError(t, json.Unmarshal(raw, &pj))
	org, _, _ := strings.Cut(pj.ID, "-")
	doc, err := os.ReadFile(repoPath(t, "docs/install.md"))
	require.NoError(t, err)
	require.Contains(t, string(doc), "can be signed only by the `"+org+"` org",
		"docs/install.md says who can sign %s", pj.ID)
}
