package vllm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// promqlHomes are the only places outside this package whose non-test Go
// files may write PromQL, and why:
//   - pkg/vllm: the home of every PromQL builder (this package);
//   - pkg/sim: the fleet simulator, which imitates vLLM's /metrics and
//     never queries Prometheus, but whose metric text can look like it;
//   - pkg/internal: test harnesses (promtest, fleettest, fleetbench) that
//     load recording rules and ask real stores their own questions to
//     check the plugin's answers against;
//   - cmd: the tools (simulator, node agent, release) are not the plugin;
//   - scripts: developer tooling (mutation scores), not the plugin.
//
// Test files (_test.go) are exempt everywhere: they write PromQL to check
// ours against.
var promqlHomes = []string{"pkg/vllm", "pkg/sim", "pkg/internal", "cmd", "scripts"}

// skippedDirs hold no plugin Go code: fixtures and dependencies anywhere,
// and at the root the frontend and build outputs.
var (
	skippedDirs     = map[string]bool{"node_modules": true, "testdata": true, "vendor": true, ".git": true}
	skippedRootDirs = map[string]bool{"src": true, "dist": true, "coverage": true}
)

// promqlShapes recognise PromQL inside a Go string literal (a constant or
// a fmt format): a function or aggregation applied with "(", an
// aggregation's by/without clause, vector matching, a range or subquery
// written with format verbs or a literal duration, and a label matcher
// opening a selector.
var promqlShapes = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:i?rate|increase|i?delta|deriv|resets|changes|histogram_quantile|histogram_fraction|label_replace|label_join|timestamp|absent|clamp(?:_min|_max)?|predict_linear|\w+_over_time|sum|count|min|max|avg|group|stddev|stdvar|topk|bottomk|quantile|count_values)\(`),
	regexp.MustCompile(`\b(?:sum|count|min|max|avg|group|stddev|stdvar|topk|bottomk|quantile|count_values) (?:by|without) \(`),
	regexp.MustCompile(`\b(?:on|ignoring) \(|\bgroup_(?:left|right)\b`),
	regexp.MustCompile(`\[%s(?::%s)?\]|\[\d+(?:ms|[smhdwy])(?::\d*(?:ms|[smhdwy])?)?\]`),
	regexp.MustCompile(`\{\s*[A-Za-z_]\w*\s*(?:=~|!~|!=|=)\s*"|__name__\s*(?:=~|!~|!=|=)`),
}

// TestPromQLIsBuiltOnlyInVLLM fails when a non-test Go file outside
// promqlHomes holds a string literal shaped like PromQL: expressions are
// built here, tested here, and only called from elsewhere. It is a
// heuristic over literals, so it cannot see PromQL assembled from pieces
// that each look innocent ("(" + name + "[" + d + "])"), matchers joined
// from bare label names ("job=" + quoted value), expressions read from
// files or settings, or a builder here called from the wrong package; it
// is a tripwire for the common case, a fmt.Sprintf of a query.
func TestPromQLIsBuiltOnlyInVLLM(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skippedDirs[d.Name()] || skippedRootDirs[rel] || isPromQLHome(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		found = append(found, promqlLiterals(t, path, rel)...)
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "PromQL is built only in pkg/vllm: move these into a documented builder there, with a test of its exact text")
}

func isPromQLHome(rel string) bool {
	for _, h := range promqlHomes {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

// promqlLiterals lists file:line and text of each PromQL-shaped string
// literal in one Go file.
func promqlLiterals(t *testing.T, path, rel string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	require.NoError(t, err, rel)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err == nil && looksLikePromQL(s) {
			out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value)
		}
		return true
	})
	return out
}

func looksLikePromQL(s string) bool {
	for _, re := range promqlShapes {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// moduleRoot is the directory of go.mod above the package under test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}

// TestLooksLikePromQL pins what the heuristic takes for PromQL, and the
// messages and formats it must leave alone.
func TestLooksLikePromQL(t *testing.T) {
	tests := []struct {
		lit  string
		want bool
	}{
		{"count(last_over_time(%s[%s]))", true},
		{"group by (%s) (%s)", true},
		{"max by (%s) (max_over_time(timestamp(%s)[%s:%s]))", true},
		{"sum(rate(%s[5m]))", true},
		{"histogram_quantile(0.99, %s)", true},
		{"%s / on (instance) group_left %s", true},
		{"%s[%s]", true},
		{"x[5m:30s]", true},
		{`up{job="%s"}`, true},
		{`{__name__=~"vllm:.+"}`, true},
		{"%w: agentUrls[%d] must not contain credentials", false},
		{"info.screenshots[%d] (%s)", false},
		{"%s on %s serving %s", false},
		{"Warning: %d of the %s seen in the last hour are missing now", false},
		{"vllm:num_requests_running", false},
		{"grouped by (model) in the table", false},
	}
	for _, tt := range tests {
		t.Run(tt.lit, func(t *testing.T) {
			require.Equal(t, tt.want, looksLikePromQL(tt.lit))
		})
	}
}
