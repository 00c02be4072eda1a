package deploytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/stretchr/testify/require"
)

// The README and docs/ link one release's archive and describe features. A
// feature they name that the changelog lists only under "Unreleased" (or
// under a newer version) is one an admin following the link does not get:
// issue 36 found prefixCache, lora, roleLabel and recordingRules documented
// beside a 0.2.0 link while 0.2.0 lacked them. These checks tie the three
// together: the links name package.json's version, the changelog has that
// version's section, and every query type and setting the docs name in
// backticks is in that section or an older one.

// downloadURL matches a release archive link: the tag and the archive's version.
var downloadURL = regexp.MustCompile(`releases/download/v([0-9][0-9A-Za-z.\-]*)/inferops-vllm-datasource-([0-9][0-9A-Za-z.\-]*?)\.zip`)

// changelogHeading matches a release section ("## 0.2.0 — 2026-12-01") or "## Unreleased".
var changelogHeading = regexp.MustCompile(`(?m)^## +(Unreleased|\[?v?[0-9][^\s\]]*)`)

// packageVersion reads package.json's version: the release the tree builds.
func packageVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(repoPath(t, "package.json"))
	require.NoError(t, err)
	var pkg struct {
		Version string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(data, &pkg))
	require.NotEmpty(t, pkg.Version)
	return pkg.Version
}

// userDocs lists the README and the markdown files under docs/, as slash paths.
func userDocs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(repoPath(t, "docs/*.md"))
	require.NoError(t, err)
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, "docs/"+filepath.Base(f))
	}
	return out
}

// changelogSections splits the changelog into its sections, newest first,
// each as its name ("Unreleased" or the version) and its text.
func changelogSections(text string) (names, bodies []string) {
	idx := changelogHeading.FindAllStringSubmatchIndex(text, -1)
	for i, m := range idx {
		end := len(text)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		name := strings.TrimPrefix(strings.Trim(text[m[2]:m[3]], "[]"), "v")
		names = append(names, name)
		bodies = append(bodies, text[m[1]:end])
	}
	return names, bodies
}

// splitAt divides the changelog at the named release's section: the text of
// the sections newer than it (Unreleased included), and of it and the older
// ones (what it and the releases before it shipped). ok is false when the
// changelog has no section for it.
func splitAt(changelog, version string) (newer, released string, ok bool) {
	names, bodies := changelogSections(changelog)
	for i, n := range names {
		if n == version {
			return strings.Join(bodies[:i], "\n"), strings.Join(bodies[i:], "\n"), true
		}
	}
	return "", "", false
}

// mentions says whether a changelog text names n as code or as a JSON string.
func mentions(text, n string) bool {
	return strings.Contains(text, "`"+n+"`") || strings.Contains(text, `"`+n+`"`)
}

// unreleasedNamed lists the names a doc writes in backticks that the release
// does not have: query types the released text never names, and settings
// that a newer section introduces and the released text never names (the
// early releases did not list every setting they read, so a setting no
// section names counts as old).
func unreleasedNamed(doc, newer, released string, types, settings []string) []string {
	var out []string
	for _, n := range append(append([]string{}, types...), settings...) {
		if !strings.Contains(doc, "`"+n+"`") || mentions(released, n) {
			continue
		}
		if isSetting := !slices.Contains(types, n); isSetting && !mentions(newer, n) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestDocsLinkTheVersionTheTreeBuilds requires every release-archive link in
// the README and docs/ to name package.json's version, in its tag and its
// file name alike.
func TestDocsLinkTheVersionTheTreeBuilds(t *testing.T) {
	version := packageVersion(t)
	found := 0
	for _, rel := range userDocs(t) {
		data, err := os.ReadFile(repoPath(t, rel))
		require.NoError(t, err)
		for _, m := range downloadURL.FindAllStringSubmatch(string(data), -1) {
			found++
			require.Equal(t, version, m[1], "%s links the tag v%s; package.json is %s", rel, m[1], version)
			require.Equal(t, version, m[2], "%s links archive %s; package.json is %s", rel, m[2], version)
		}
	}
	require.NotZero(t, found, "no release-archive link in the README or docs/: the install path names none")
}

// TestDocsDescribeOnlyTheLinkedRelease requires the changelog to have a
// section for package.json's version and every query type and data-source
// setting that the README or docs/ name in backticks to appear in that
// section or an older one, never only under Unreleased.
func TestDocsDescribeOnlyTheLinkedRelease(t *testing.T) {
	version := packageVersion(t)
	data, err := os.ReadFile(repoPath(t, "CHANGELOG.md"))
	require.NoError(t, err)
	newer, released, ok := splitAt(string(data), version)
	require.True(t, ok, "CHANGELOG.md has no section for %s, the version the docs link: cut the release (docs/development.md)", version)
	var types []string
	for _, qt := range models.QueryTypes {
		types = append(types, string(qt))
	}
	keys := models.SettingKeys()
	settings := append(append([]string{}, keys.JSONData...), keys.SecureJSONData...)
	for _, rel := range userDocs(t) {
		doc, err := os.ReadFile(repoPath(t, rel))
		require.NoError(t, err)
		t.Run(rel, func(t *testing.T) {
			require.Empty(t, unreleasedNamed(string(doc), newer, released, types, settings),
				"%s names these query types or settings, which CHANGELOG.md lists under no release up to %s", rel, version)
		})
	}
}

// TestReleaseDocsCheckCatchesUnreleasedFeatures feeds the changelog reader a
// changelog whose newest release lacks a feature the docs name, so a reader
// that takes everything as released fails.
func TestReleaseDocsCheckCatchesUnreleasedFeatures(t *testing.T) {
	changelog := "# Changelog\n\n## Unreleased\n\n- `prefixCache`, `rulePrefix`\n\n## 0.2.0 — 2026-12-01\n\n- `queue`, `roleLabel`\n\n## 0.1.0\n\n- `fleet`\n"
	tests := []struct {
		name    string
		version string
		doc     string
		ok      bool
		want    []string
	}{
		{"an unreleased type beside a released one", "0.2.0", "use `queue` or `prefixCache`", true, []string{"prefixCache"}},
		{"an older release's type and setting", "0.2.0", "`fleet` and `roleLabel`", true, nil},
		{"a type newer than the linked release", "0.1.0", "`queue`", true, []string{"queue"}},
		{"a type no section names", "0.2.0", "`capacity`", true, []string{"capacity"}},
		{"a setting only Unreleased names", "0.2.0", "set `rulePrefix`", true, []string{"rulePrefix"}},
		{"a setting no section names predates the changelog", "0.2.0", "set `tlsAuth`", true, nil},
		{"a setting newer than the linked release", "0.1.0", "set `roleLabel`", true, []string{"roleLabel"}},
		{"a version with no section", "0.3.0", "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newer, released, ok := splitAt(changelog, tt.version)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			types := []string{"queue", "prefixCache", "fleet", "capacity"}
			settings := []string{"roleLabel", "rulePrefix", "tlsAuth"}
			require.Equal(t, tt.want, unreleasedNamed(tt.doc, newer, released, types, settings))
		})
	}
}
