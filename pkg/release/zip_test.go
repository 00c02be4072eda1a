package release

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestZipRoundTrip: what WriteZip writes, ReadZip reads back with the same
// names, modes and bytes, and writing twice gives the same bytes.
func TestZipRoundTrip(t *testing.T) {
	a := &Archive{Name: "p-1.0.0.zip", Files: []File{
		{Name: "p-datasource/gpx_p_linux_amd64", Mode: 0o755, Data: []byte("\x7fELF binary")},
		{Name: "p-datasource/img/logo.svg", Mode: 0o644, Data: []byte(`<svg viewBox="0 0 1 1"/>`)},
		{Name: "p-datasource/plugin.json", Mode: 0o644, Data: []byte(`{"id":"p-datasource"}`)},
	}}
	stamp := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	first, err := a.Bytes(stamp)
	require.NoError(t, err)
	second, err := a.Clone().Bytes(stamp)
	require.NoError(t, err)
	require.Equal(t, first, second, "same input, same bytes")

	path := filepath.Join(t.TempDir(), a.Name)
	require.NoError(t, os.WriteFile(path, first, 0o644))
	back, err := ReadZip(path)
	require.NoError(t, err)
	require.Equal(t, a.Files, back.Files)
	require.Equal(t, a.Name, back.Name)
}

// TestExtractKeepsModes: unpacking sets each file's mode exactly, whatever
// the umask, and refuses entries that would leave the folder.
func TestExtractKeepsModes(t *testing.T) {
	dir := t.TempDir()
	a := &Archive{Files: []File{{Name: "p/run", Mode: 0o755, Data: []byte("x")}, {Name: "p/doc", Mode: 0o644, Data: []byte("y")}}}
	require.NoError(t, a.Extract(dir))
	for name, want := range map[string]os.FileMode{"p/run": 0o755, "p/doc": 0o644} {
		info, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, info.Mode().Perm(), name)
	}
	evil := &Archive{Files: []File{{Name: "../escape", Mode: 0o644, Data: []byte("z")}}}
	require.ErrorContains(t, evil.Extract(dir), "leaves the folder")
}

// TestPackNormalizesModes: Pack gives executables 0755 and everything else
// 0644, names the zip by id and version, and writes sha256sum's line.
func TestPackNormalizesModes(t *testing.T) {
	dist := t.TempDir()
	write := func(name string, mode os.FileMode, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dist, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dist, name), []byte(data), mode))
		require.NoError(t, os.Chmod(filepath.Join(dist, name), mode))
	}
	write("plugin.json", 0o600, `{"id":"acme-x-datasource","executable":"gpx_x","info":{"version":"1.2.3","updated":"2026-12-01"}}`)
	write("gpx_x_linux_amd64", 0o700, "bin")
	write("go_plugin_build_manifest", 0o755, "abc:pkg/main.go")
	write("img/logo.svg", 0o600, "<svg/>")
	out := t.TempDir()
	res, err := Pack(dist, out)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(out, "acme-x-datasource-1.2.3.zip"), res.Zip)
	a, err := ReadZip(res.Zip)
	require.NoError(t, err)
	modes := map[string]os.FileMode{}
	for _, f := range a.Files {
		modes[f.Name] = f.Mode.Perm()
	}
	require.Equal(t, map[string]os.FileMode{
		"acme-x-datasource/plugin.json":              0o644,
		"acme-x-datasource/gpx_x_linux_amd64":        0o755,
		"acme-x-datasource/go_plugin_build_manifest": 0o644,
		"acme-x-datasource/img/logo.svg":             0o644,
	}, modes)
	zipBytes, err := os.ReadFile(res.Zip)
	require.NoError(t, err)
	sum, err := os.ReadFile(res.Checksum)
	require.NoError(t, err)
	require.Equal(t, SHA256Line(zipBytes, "acme-x-datasource-1.2.3.zip"), string(sum))

	write("plugin.json", 0o644, `{"id":"acme-x-datasource","info":{"version":"%VERSION%"}}`)
	_, err = Pack(dist, out)
	require.ErrorContains(t, err, "no built version", "an unbuilt plugin.json is refused")
}
