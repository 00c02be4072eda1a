package release_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/release"
)

// archiveEnv names an archive scripts/package.sh already built (scripts/test.sh
// sets it after building one). Without it the tests build one themselves.
// platformsEnv lists the platforms that archive was built for (os/arch,
// comma-separated; all five when unset).
const (
	archiveEnv   = "VLLM_PLUGIN_ARCHIVE"
	platformsEnv = "VLLM_PLUGIN_PLATFORMS"
)

// platforms are the platforms whose binaries the archive under test holds.
func platforms(t *testing.T) []release.Platform {
	t.Helper()
	list := os.Getenv(platformsEnv)
	if list == "" || os.Getenv(archiveEnv) == "" {
		return release.Platforms
	}
	var out []release.Platform
	for _, p := range strings.Split(list, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		require.True(t, ok, "%s: %q is not os/arch", platformsEnv, p)
		out = append(out, release.Platform{OS: osName, Arch: arch})
	}
	return out
}

var (
	buildOnce  sync.Once
	builtPath  string
	builtError error
	builtDir   string
)

// builtArchive returns the path of the release archive: the one named by
// VLLM_PLUGIN_ARCHIVE, or one this test binary builds with
// scripts/package.sh (all five platforms), once for every test.
func builtArchive(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(archiveEnv); p != "" {
		return p
	}
	buildOnce.Do(func() {
		builtDir, builtError = os.MkdirTemp("", "vllm-release-")
		if builtError != nil {
			return
		}
		root := grafanahost.RepoRoot(t)
		cmd := exec.Command("bash", "scripts/package.sh", "--out", builtDir)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			builtError = err
			t.Logf("scripts/package.sh:\n%s", out)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		builtPath = strings.TrimPrefix(lines[len(lines)-1], "==> package: ")
		builtPath, _, _ = strings.Cut(builtPath, " in ")
	})
	require.NoError(t, builtError, "scripts/package.sh failed")
	return builtPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func readBuilt(t *testing.T) *release.Archive {
	t.Helper()
	a, err := release.ReadZip(builtArchive(t))
	require.NoError(t, err)
	return a
}

func sourceOptions(t *testing.T) release.Options {
	return release.Options{SourceDir: grafanahost.RepoRoot(t), Platforms: platforms(t)}
}

// TestBuiltArchivePassesEveryCheck runs every offline catalogue check over
// the archive scripts/package.sh built, with the source it was built from.
func TestBuiltArchivePassesEveryCheck(t *testing.T) {
	a := readBuilt(t)
	report := release.Run(a, sourceOptions(t))
	t.Logf("%s:\n%s", a.Name, report)
	require.Len(t, report.Results, len(release.Checks()))
	require.Empty(t, report.Failed(), "\n%s", report)

	var pj release.Metadata
	require.NoError(t, json.Unmarshal(a.File("inferops-vllm-datasource/plugin.json").Data, &pj))
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(grafanahost.RepoRoot(t), "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &pkg))
	require.Equal(t, "inferops-vllm-datasource-"+pkg.Version+".zip", a.Name, "the archive is named by package.json's version")
	require.Equal(t, pkg.Version, pj.Info.Version)
	_, err = time.Parse(time.DateOnly, pj.Info.Updated)
	require.NoError(t, err, "updated is the build date")

	for _, want := range []string{"plugin.json", "module.js", "module.js.map", "README.md", "CHANGELOG.md", "LICENSE",
		"img/logo.svg", "img/logo-small.svg", "dashboards/fleet-overview.json", "go_plugin_build_manifest"} {
		require.NotNil(t, a.File("inferops-vllm-datasource/"+want), want)
	}
}

// TestChecksumFile: the .sha256 beside the archive is sha256sum's line for it.
func TestChecksumFile(t *testing.T) {
	zipPath := builtArchive(t)
	data, err := os.ReadFile(zipPath)
	require.NoError(t, err)
	sum, err := os.ReadFile(zipPath + ".sha256")
	require.NoError(t, err)
	require.Equal(t, release.SHA256Line(data, filepath.Base(zipPath)), string(sum))
}

// TestBrokenArchivesFail breaks the real archive one way at a time and
// requires the named checks to fail, and only the checks that should.
func TestBrokenArchivesFail(t *testing.T) {
	const top = "inferops-vllm-datasource/"
	pls := platforms(t)
	require.GreaterOrEqual(t, len(pls), 2, "the broken-archive cases need binaries of two platforms")
	unix := top + pls[0].Executable("gpx_vllm") // scripts/package.sh lists linux/amd64 first
	require.NotEqual(t, "windows", pls[0].OS)
	other := top + pls[1].Executable("gpx_vllm")
	last := top + pls[len(pls)-1].Executable("gpx_vllm")
	tests := []struct {
		name   string
		mutate func(t *testing.T, a *release.Archive)
		fail   []string
	}{
		{"missing small logo", func(t *testing.T, a *release.Archive) { remove(t, a, top+"img/logo-small.svg") }, []string{"logos"}},
		{"logo that is not an SVG", func(t *testing.T, a *release.Archive) {
			file(t, a, top+"img/logo.svg").Data = []byte("\x89PNG\r\n\x1a\n")
		}, []string{"logos", "unsafe-svg"}}, // a PNG named .svg is not even XML
		{"non-executable binary", func(t *testing.T, a *release.Archive) { file(t, a, unix).Mode = 0o644 }, []string{"binary-permissions"}},
		{"group-writable binary", func(t *testing.T, a *release.Archive) { file(t, a, unix).Mode = 0o775 }, []string{"binary-permissions"}},
		{"wrong id in plugin.json", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"plugin.json", func(m map[string]any) { m["id"] = "inferops-llm-datasource" })
		}, []string{"archive-name", "go-build-info"}},
		{"missing binary of one platform", func(t *testing.T, a *release.Archive) { remove(t, a, last) }, []string{"backend-binary"}},
		{"another platform's binary under this name", func(t *testing.T, a *release.Archive) {
			file(t, a, unix).Data = append([]byte(nil), file(t, a, other).Data...)
		}, []string{"binary-format"}},
		{"two top folders", func(t *testing.T, a *release.Archive) {
			a.Files = append(a.Files, release.File{Name: "extra/README.md", Mode: 0o644, Data: []byte("x")})
		}, nil}, // almost everything fails: the archive check must be among them
		{"missing module.js", func(t *testing.T, a *release.Archive) { remove(t, a, top+"module.js") }, []string{"module-js", "js-source-map", "legacy-platform", "tracking-scripts"}},
		{"source map with an absolute path", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"module.js.map", func(m map[string]any) {
				m["sources"] = append(m["sources"].([]any), "webpack://inferops-vllm-datasource//home/builder/src/x.ts")
			})
		}, []string{"js-source-map"}},
		{"source map of other code", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"module.js.map", func(m map[string]any) {
				for i, s := range m["sources"].([]any) {
					if strings.HasSuffix(s.(string), "/datasource.ts") {
						m["sourcesContent"].([]any)[i] = "export const changed = true;\n"
					}
				}
			})
		}, []string{"js-source-map"}},
		{"development leftovers", func(t *testing.T, a *release.Archive) {
			a.Files = append(a.Files, release.File{Name: top + "node_modules/x/index.js", Mode: 0o644, Data: []byte("x")},
				release.File{Name: top + ".env", Mode: 0o644, Data: []byte("TOKEN=x")})
		}, []string{"no-dev-leftovers"}},
		{"README with a repository-relative link", func(t *testing.T, a *release.Archive) {
			f := file(t, a, top+"README.md")
			f.Data = append(f.Data, []byte("\nSee [the dashboards](dashboards/fleet-overview.json).\n")...)
		}, []string{"readme-links"}},
		{"SVG with a script", func(t *testing.T, a *release.Archive) {
			a.Files = append(a.Files, release.File{Name: top + "img/evil.svg", Mode: 0o644, Data: []byte(`<svg viewBox="0 0 1 1"><script>alert(1)</script></svg>`)})
		}, []string{"unsafe-svg"}},
		{"development build", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"plugin.json", func(m map[string]any) { m["buildMode"] = "development" })
		}, []string{"build-mode"}},
		{"version that is not package.json's", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"plugin.json", func(m map[string]any) { m["info"].(map[string]any)["version"] = "9.9.9" })
		}, []string{"archive-name", "version", "changelog", "go-build-info"}},
		{"screenshot that is missing", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"plugin.json", func(m map[string]any) {
				info := m["info"].(map[string]any)
				info["screenshots"] = append(info["screenshots"].([]any), map[string]any{"name": "x", "path": "img/none.png"})
			})
		}, []string{"screenshots"}},
		{"Go source changed after the build", func(t *testing.T, a *release.Archive) {
			f := file(t, a, top+"go_plugin_build_manifest")
			f.Data = bytes.Replace(f.Data, []byte("pkg/main.go"), []byte("pkg/old.go"), 1)
		}, []string{"go-manifest"}},
		{"exact Grafana version", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"plugin.json", func(m map[string]any) {
				m["dependencies"].(map[string]any)["grafanaDependency"] = "12.0.0"
			})
		}, []string{"grafana-dependency"}},
		{"dashboard named apart from its title", func(t *testing.T, a *release.Archive) {
			editJSON(t, a, top+"dashboards/latency-slo.json", func(m map[string]any) { m["title"] = "vLLM latency and SLO" })
		}, []string{"includes"}},
		{"debug marker", func(t *testing.T, a *release.Archive) {
			a.Files = append(a.Files, release.File{Name: top + "standalone.txt", Mode: 0o644, Data: []byte("1")})
		}, []string{"backend-debug"}},
	}
	good := readBuilt(t)
	opts := sourceOptions(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := good.Clone()
			tt.mutate(t, a)
			report := release.Run(a, opts)
			failed := map[string]bool{}
			for _, r := range report.Failed() {
				failed[r.Check.Name] = true
			}
			if tt.fail == nil {
				require.True(t, failed["archive"], "\n%s", report)
				return
			}
			want := map[string]bool{}
			for _, name := range tt.fail {
				want[name] = true
			}
			require.Equal(t, want, failed, "\n%s", report)
		})
	}
}

func file(t *testing.T, a *release.Archive, name string) *release.File {
	t.Helper()
	f := a.File(name)
	require.NotNil(t, f, "%s is not in the archive", name)
	return f
}

func remove(t *testing.T, a *release.Archive, name string) {
	t.Helper()
	file(t, a, name)
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files = append(a.Files[:i], a.Files[i+1:]...)
			return
		}
	}
}

func editJSON(t *testing.T, a *release.Archive, name string, edit func(map[string]any)) {
	t.Helper()
	f := file(t, a, name)
	var m map[string]any
	require.NoError(t, json.Unmarshal(f.Data, &m))
	edit(m)
	data, err := json.Marshal(m)
	require.NoError(t, err)
	f.Data = data
}
