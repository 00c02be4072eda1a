package release_test

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/release"
)

// agentArchive is one node agent archive scripts/package.sh wrote.
type agentArchive struct {
	Path     string
	Platform release.Platform
}

func packageVersion(t *testing.T) string {
	t.Helper()
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(grafanahost.RepoRoot(t), "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &pkg))
	return pkg.Version
}

// builtAgentArchives are the node agent archives beside the plugin archive,
// one per Linux platform the archive was built for.
func builtAgentArchives(t *testing.T) []agentArchive {
	t.Helper()
	dir := filepath.Dir(builtArchive(t))
	version := packageVersion(t)
	var out []agentArchive
	for _, p := range platforms(t) {
		if p.OS == "linux" {
			out = append(out, agentArchive{filepath.Join(dir, release.AgentArchiveName(version, p)), p})
		}
	}
	require.NotEmpty(t, out, "the archive was built for no Linux platform, so there is no node agent archive")
	return out
}

func agentOptions(t *testing.T, p release.Platform) release.AgentOptions {
	return release.AgentOptions{Version: packageVersion(t), Platform: p, SourceDir: grafanahost.RepoRoot(t)}
}

// TestBuiltAgentArchivesPass: every node agent archive passes CheckAgent
// with the source, and its .sha256 is sha256sum's line for it.
func TestBuiltAgentArchivesPass(t *testing.T) {
	for _, aa := range builtAgentArchives(t) {
		t.Run(aa.Platform.String(), func(t *testing.T) {
			a, err := release.ReadTarGz(aa.Path)
			require.NoError(t, err)
			require.Empty(t, release.CheckAgent(a, agentOptions(t, aa.Platform)))

			data, err := os.ReadFile(aa.Path)
			require.NoError(t, err)
			sum, err := os.ReadFile(aa.Path + ".sha256")
			require.NoError(t, err)
			require.Equal(t, release.SHA256Line(data, filepath.Base(aa.Path)), string(sum))
		})
	}
}

// TestAgentFromArchiveRuns unpacks this machine's agent archive and runs
// the binary: --version names the release and --help lists the flags the
// systemd unit uses. Neither needs the NVIDIA driver, since NVML is loaded
// only when the agent starts serving.
func TestAgentFromArchiveRuns(t *testing.T) {
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	var path string
	for _, aa := range builtAgentArchives(t) {
		if aa.Platform == host {
			path = aa.Path
		}
	}
	if path == "" {
		t.Skipf("no node agent archive for this machine (%s) was built", host)
	}
	a, err := release.ReadTarGz(path)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, a.Extract(dir))
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".tar.gz"), release.AgentBinary)

	out, err := exec.Command(bin, "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "vllm-node-agent "+packageVersion(t)+"\n", string(out))

	out, err = exec.Command(bin, "--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, flag := range []string{"-listen", "-token-file", "-instance-host", "-node-name"} {
		require.Contains(t, string(out), flag)
	}
}

// TestBrokenAgentArchivesFail breaks a real agent archive one way at a time;
// CheckAgent must report each.
func TestBrokenAgentArchivesFail(t *testing.T) {
	all := builtAgentArchives(t)
	good, err := release.ReadTarGz(all[0].Path)
	require.NoError(t, err)
	opts := agentOptions(t, all[0].Platform)
	top := strings.TrimSuffix(good.Name, ".tar.gz") + "/"
	tests := []struct {
		name   string
		mutate func(t *testing.T, a *release.Archive, o *release.AgentOptions)
		want   string
	}{
		{"binary not executable", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			file(t, a, top+"vllm-node-agent").Mode = 0o644
		}, "mode 0644"},
		{"unit missing", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			remove(t, a, top+"vllm-node-agent.service")
		}, "vllm-node-agent.service is missing"},
		{"unit not the repository's", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			f := file(t, a, top+"vllm-node-agent.service")
			f.Data = bytes.Replace(f.Data, []byte("--instance-host="), []byte("--instance-hostname="), 1)
		}, "differs from deploy/systemd/vllm-node-agent.service"},
		{"stray file", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			a.Files = append(a.Files, release.File{Name: top + "README.txt", Mode: 0o644, Data: []byte("x")})
		}, "README.txt: not a file of the agent archive"},
		{"built as another version", func(_ *testing.T, _ *release.Archive, o *release.AgentOptions) {
			o.Version = "9.9.9"
		}, `main.version is "`},
		{"a cgo-free build", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			f := file(t, a, top+"vllm-node-agent")
			f.Data = bytes.ReplaceAll(f.Data, []byte("\tCGO_ENABLED=1\n"), []byte("\tCGO_ENABLED=0\n"))
		}, `CGO_ENABLED="0"`},
	}
	if len(all) > 1 {
		other, err := release.ReadTarGz(all[1].Path)
		require.NoError(t, err)
		otherBin := strings.TrimSuffix(other.Name, ".tar.gz") + "/vllm-node-agent"
		tests = append(tests, struct {
			name   string
			mutate func(t *testing.T, a *release.Archive, o *release.AgentOptions)
			want   string
		}{"another platform's binary", func(t *testing.T, a *release.Archive, _ *release.AgentOptions) {
			file(t, a, top+"vllm-node-agent").Data = file(t, other, otherBin).Data
		}, "executable, not " + all[0].Platform.String()})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, o := good.Clone(), opts
			tt.mutate(t, a, &o)
			require.Contains(t, strings.Join(release.CheckAgent(a, o), "\n"), tt.want)
		})
	}
}

// TestAgentNeedsOldGlibcOnly: the released binaries run on glibc 2.34
// hosts and load NVML at run time (CheckAgent's reasons, shown here).
func TestAgentNeedsOldGlibcOnly(t *testing.T) {
	for _, aa := range builtAgentArchives(t) {
		t.Run(aa.Platform.String(), func(t *testing.T) {
			a, err := release.ReadTarGz(aa.Path)
			require.NoError(t, err)
			bin := file(t, a, strings.TrimSuffix(a.Name, ".tar.gz")+"/vllm-node-agent")
			f, err := elf.NewFile(bytes.NewReader(bin.Data))
			require.NoError(t, err)
			need, err := release.NeededGlibc(f)
			require.NoError(t, err)
			t.Logf("%s needs glibc %s", aa.Platform, need)
			require.NotEmpty(t, need, "a cgo build imports glibc symbols")
			libs, err := f.ImportedLibraries()
			require.NoError(t, err)
			require.NotContains(t, strings.Join(libs, " "), "nvidia")
		})
	}
}
