package deploytest

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// repoURL is where the repository's own files are linked from pages that
// need absolute links (the catalogue page, src/README.md).
const repoURL = "https://github.com/inferops/vllm-datasource/"

// docFiles are the markdown files whose links must resolve.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(repoPath(t, "docs/*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/ has no markdown files")
	files := []string{"README.md", "src/README.md", "CHANGELOG.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot(t), d)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

var (
	fence    = regexp.MustCompile("(?m)^\\s*(```|~~~)")
	codeSpan = regexp.MustCompile("`+[^`\n]*`+")
	// mdLinkRE matches [text](target) and ![alt](target); the target ends
	// at the first space (a title may follow) or closing parenthesis.
	mdLinkRE  = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// prose returns the file's lines outside fenced code blocks.
func prose(text string) []string {
	var out []string
	inside := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inside = !inside
			continue
		}
		if !inside {
			out = append(out, line)
		}
	}
	return out
}

// links lists the link targets of a markdown text, outside code.
func links(text string) []string {
	var out []string
	for _, line := range prose(text) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// slug is GitHub's anchor for a heading: the rendered text lowercased,
// every character but letters, digits, spaces, '-' and '_' dropped, and
// spaces turned into '-'.
func slug(heading string) string {
	text := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1") // links keep their text
	text = strings.NewReplacer("`", "", "**", "", "__", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors lists the anchors GitHub gives a markdown text's headings,
// numbering repeats (-1, -2, …) as GitHub does.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// resolveLink checks one link target of the file at from (slash path from
// the repository root) and returns what is wrong with it, or "".
func resolveLink(root, from, target string) string {
	if rest, ok := strings.CutPrefix(target, repoURL); ok {
		// blob/<branch>/<path> or tree/<branch>/<path>: the path must exist here.
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) == 3 && (parts[0] == "blob" || parts[0] == "tree") && parts[1] == "main" {
			return resolveLocal(root, "", "/"+parts[2])
		}
		return ""
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Sprintf("link %q does not parse: %v", target, err)
	}
	if u.Scheme != "" || strings.HasPrefix(target, "//") {
		return "" // external: not checked offline
	}
	return resolveLocal(root, path.Dir(from), target)
}

// resolveLocal checks a relative (or, with a leading '/', repository-root)
// path with an optional #anchor.
func resolveLocal(root, dir, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	rel := path.Clean(path.Join(dir, file))
	if strings.HasPrefix(file, "/") {
		rel = path.Clean(strings.TrimPrefix(file, "/"))
	}
	if file == "" {
		rel = dir
	}
	if strings.HasPrefix(rel, "..") {
		return fmt.Sprintf("link %q leaves the repository", target)
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil {
		return fmt.Sprintf("link %q: %s does not exist", target, rel)
	}
	if anchor == "" || info.IsDir() || !strings.HasSuffix(rel, ".md") {
		return ""
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	if !anchors(string(data))[strings.ToLower(anchor)] {
		return fmt.Sprintf("link %q: %s has no heading with the anchor #%s", target, rel, anchor)
	}
	return ""
}

// TestDocLinksResolve requires every relative link (and every link to this
// repository's main branch) in the README, docs/, the catalogue page and the
// changelog to name a file that exists, and every #anchor into a markdown
// file to name one of its headings.
func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, f := range docFiles(t) {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			require.NoError(t, err)
			var broken []string
			for _, target := range links(string(data)) {
				from := f
				if strings.HasPrefix(target, "#") {
					target = path.Base(f) + target
				}
				if msg := resolveLink(root, from, target); msg != "" {
					broken = append(broken, msg)
				}
			}
			require.Empty(t, broken, "%s has broken links", f)
		})
	}
}

// TestDocLinkCheckerCatchesBreakage feeds the link checker links that must
// fail and links that must pass, so a checker that accepts everything fails.
func TestDocLinkCheckerCatchesBreakage(t *testing.T) {
	root := repoRoot(t)
	tests := []struct {
		name, from, target string
		wantBroken         bool
	}{
		{"existing file", "README.md", "docs/queries.md", false},
		{"missing file", "README.md", "docs/nope.md", true},
		{"relative from docs/", "docs/queries.md", "configuration.md", false},
		{"up to the root", "docs/queries.md", "../README.md", false},
		{"existing heading", "README.md", "docs/queries.md#fleet--one-row-per-engine-worst-first", false},
		{"missing heading", "README.md", "docs/queries.md#no-such-heading", true},
		{"in-page anchor", "docs/queries.md", "queries.md#query-types", false},
		{"repository link to a file that exists", "src/README.md", repoURL + "blob/main/docs/configuration.md", false},
		{"repository link to a file that does not", "src/README.md", repoURL + "blob/main/docs/nope.md", true},
		{"external", "README.md", "https://grafana.com/docs/", false},
		{"outside the repository", "README.md", "../../etc/passwd", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := resolveLink(root, tt.from, tt.target)
			require.Equal(t, tt.wantBroken, msg != "", "message: %q", msg)
		})
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"`fleet` — one row per engine, worst first", "fleet--one-row-per-engine-worst-first"},
		{"The compose stack: `docker compose up`", "the-compose-stack-docker-compose-up"},
		{"Sign it for your Grafana (private signature)", "sign-it-for-your-grafana-private-signature"},
		{"At scale: Thanos, Mimir, VictoriaMetrics", "at-scale-thanos-mimir-victoriametrics"},
		{"Node ≥ 20.19 and Go 1.26", "node--2019-and-go-126"},
		{"[Link](x.md) text", "link-text"},
	}
	for _, tt := range tests {
		t.Run(tt.heading, func(t *testing.T) {
			require.Equal(t, tt.want, slug(tt.heading))
		})
	}
	t.Run("repeated headings are numbered", func(t *testing.T) {
		got := anchors("# A\n## Notes\n```\n## Not a heading\n```\n## Notes\n")
		require.Equal(t, map[string]bool{"a": true, "notes": true, "notes-1": true}, got)
	})
}

// provisionedKeys reads the jsonData and secureJsonData keys of every data
// source in a provisioning file (datasources at the top, or under the Helm
// values' datasources."datasources.yaml").
func provisionedKeys(t *testing.T, rel string) []string {
	t.Helper()
	data, err := os.ReadFile(repoPath(t, rel))
	require.NoError(t, err)
	type ds struct {
		JSONData       map[string]any `yaml:"jsonData"`
		SecureJSONData map[string]any `yaml:"secureJsonData"`
	}
	var doc struct {
		Datasources yaml.Node `yaml:"datasources"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc), rel)
	var list []ds
	if doc.Datasources.Kind == yaml.SequenceNode {
		require.NoError(t, doc.Datasources.Decode(&list), rel)
	} else {
		var helm map[string]struct {
			Datasources []ds `yaml:"datasources"`
		}
		require.NoError(t, doc.Datasources.Decode(&helm), rel)
		for _, f := range helm {
			list = append(list, f.Datasources...)
		}
	}
	require.NotEmpty(t, list, "%s provisions no data source", rel)
	var keys []string
	for _, d := range list {
		for k := range d.JSONData {
			keys = append(keys, k)
		}
		for k := range d.SecureJSONData {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// TestConfigurationDocumentsEverySetting requires docs/configuration.md to
// name (in backticks) every setting the backend reads, taken from the
// settings structs' json tags, and every key the shipped provisioning files
// and Helm values set.
func TestConfigurationDocumentsEverySetting(t *testing.T) {
	doc, err := os.ReadFile(repoPath(t, "docs/configuration.md"))
	require.NoError(t, err)
	keys := models.SettingKeys()
	sources := []struct {
		name string
		keys []string
	}{
		{"jsonData read by pkg/models", keys.JSONData},
		{"secureJsonData read by pkg/models", keys.SecureJSONData},
		{"provisioning/datasources/vllm.yaml", provisionedKeys(t, "provisioning/datasources/vllm.yaml")},
	}
	// Grafana's values files (prometheus-values.yaml is the Prometheus chart's: no data source).
	helm, err := filepath.Glob(repoPath(t, "deploy/helm/grafana-values*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, helm)
	for _, h := range helm {
		rel := "deploy/helm/" + filepath.Base(h)
		sources = append(sources, struct {
			name string
			keys []string
		}{rel, provisionedKeys(t, rel)})
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			require.NotEmpty(t, src.keys)
			var missing []string
			for _, k := range src.keys {
				if !strings.Contains(string(doc), "`"+k+"`") {
					missing = append(missing, k)
				}
			}
			require.Empty(t, missing, "docs/configuration.md does not document these settings (write each as `key`)")
		})
	}
}

// TestEveryQueryTypeDocumented requires a heading in docs/queries.md and a
// mention on the catalogue page (src/README.md) for each query type.
func TestEveryQueryTypeDocumented(t *testing.T) {
	queries, err := os.ReadFile(repoPath(t, "docs/queries.md"))
	require.NoError(t, err)
	catalogue, err := os.ReadFile(repoPath(t, "src/README.md"))
	require.NoError(t, err)
	var headings []string
	for _, line := range prose(string(queries)) {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			headings = append(headings, m[2])
		}
	}
	require.NotEmpty(t, models.QueryTypes)
	for _, qt := range models.QueryTypes {
		code := "`" + string(qt) + "`"
		t.Run(string(qt), func(t *testing.T) {
			found := false
			for _, h := range headings {
				found = found || strings.HasPrefix(h, code)
			}
			require.True(t, found, "docs/queries.md has no heading starting with %s", code)
			require.True(t, strings.Contains(string(catalogue), code), "src/README.md does not name the query type %s", code)
		})
	}
}
