package deploytest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, found from this file's location so that
// the tests work from any working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "cannot locate the test source")
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "repository root not found above %s", file)
	return root
}

// repoPath joins a slash-separated path to the repository root.
func repoPath(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(repoRoot(t), filepath.FromSlash(rel))
}

// promtool finds promtool or fails the test with what to do. A missing
// promtool must never turn into a skipped (and silently passing) test.
func promtool(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PROMTOOL_BIN"), "promtool", "/usr/bin/promtool"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("promtool is not installed: run the README's test command (bash scripts/test.sh installs it " +
		"with `apt-get install -y prometheus`) or set PROMTOOL_BIN")
	return ""
}

// runTool runs a command and returns its combined output and whether it
// exited with status 0. Failing to start it at all fails the test.
func runTool(t testing.TB, dir, name string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %s %s: %v", name, strings.Join(args, " "), err)
	}
	return out.String(), err == nil
}

// copyTree copies the regular files under src to dst (which it creates).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	require.NoError(t, err, "copy %s to %s", src, dst)
}

// writeFile writes content to path, creating its folder.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// readYAML decodes a repository file into v, failing on unknown structure
// only where v's types say so.
func readYAML(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), "parse %s", path)
}

// simFlags reads deploy/vllm-sim.flags the way scripts/demo.sh and the
// compose entrypoint do (`grep -v '^#'`, split on white space) and returns
// the words and the value of each `--name value` pair.
func simFlags(t testing.TB) ([]string, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "deploy/vllm-sim.flags"))
	require.NoError(t, err)
	var words []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	values := map[string]string{}
	for i := 0; i < len(words); i++ {
		name, ok := strings.CutPrefix(words[i], "--")
		require.True(t, ok, "deploy/vllm-sim.flags: %q is not a --flag", words[i])
		if n, v, ok := strings.Cut(name, "="); ok {
			values[n] = v
			continue
		}
		if i+1 == len(words) || strings.HasPrefix(words[i+1], "--") {
			values[name] = "true" // a boolean flag
			continue
		}
		values[name] = words[i+1]
		i++
	}
	return words, values
}
