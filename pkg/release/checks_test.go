package release

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeSVG(t *testing.T) {
	tests := []struct {
		name string
		svg  string
		bad  string
	}{
		{"plain drawing", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>`, ""},
		{"script element", `<svg><script>alert(1)</script></svg>`, "forbidden element <script>"},
		{"foreign HTML", `<svg><foreignObject><iframe/></foreignObject></svg>`, "forbidden element <foreignObject>"},
		{"event handler", `<svg><rect onload="alert(1)"/></svg>`, "event handler attribute onload"},
		{"javascript link", `<svg><a href="javascript:alert(1)"><rect/></a></svg>`, "javascript: link"},
		{"not XML", `<svg><rect></svg>`, "not well-formed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := safeSVG([]byte(tt.svg))
			if tt.bad == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.bad)
		})
	}
}

func TestScalableSVG(t *testing.T) {
	require.Empty(t, checkScalableSVG([]byte(`<svg viewBox="0 0 24 24"/>`)))
	require.Contains(t, checkScalableSVG([]byte(`<svg width="24" height="24"/>`)), "no viewBox")
	require.Contains(t, checkScalableSVG([]byte(`<html/>`)), "root element <html>")
	require.Contains(t, checkScalableSVG([]byte("\x89PNG")), "not an SVG")
}

func TestGrafanaDependency(t *testing.T) {
	tests := []struct {
		dep string
		ok  bool
	}{
		{">=12.0.0", true},
		{">=11.6.0 <13.0.0", true},
		{">=12.0.0-0", true},
		{"12.0.0", false},  // one version only (restrictivedep)
		{"12.0.x", false},  // patches of one minor only
		{"^12.0.0", false}, // not a lower bound
		{"twelve", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.dep, func(t *testing.T) {
			p := &pass{md: &Metadata{}}
			p.md.Dependencies.GrafanaDependency = tt.dep
			require.Equal(t, tt.ok, len(checkGrafanaDependency(p)) == 0, checkGrafanaDependency(p))
		})
	}
}

func TestParseRequires(t *testing.T) {
	got := parseRequires([]byte("module m\n\ngo 1.26\n\nrequire example.com/a v1.2.3\n\nrequire (\n\texample.com/b v0.1.0 // indirect\n\t// a comment\n\texample.com/c v2.0.0+incompatible\n)\n\nreplace example.com/a => ../a\n"))
	require.Equal(t, map[string]string{"example.com/a": "v1.2.3", "example.com/b": "v0.1.0", "example.com/c": "v2.0.0+incompatible"}, got)
}

// TestObjectPlatform reads the header of a real executable: this test binary.
func TestObjectPlatform(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	require.Equal(t, runtime.GOOS+"/"+runtime.GOARCH, objectPlatform(data))
	require.Contains(t, objectPlatform([]byte("#!/bin/sh\necho hi\n")), "unknown")
}

func TestImageKind(t *testing.T) {
	require.Equal(t, "png", imageKind([]byte("\x89PNG\r\n\x1a\nrest")))
	require.Equal(t, "jpeg", imageKind([]byte("\xff\xd8\xff\xe0")))
	require.Equal(t, "", imageKind([]byte("<svg/>")))
}

func TestTopFolder(t *testing.T) {
	a := &Archive{Files: []File{{Name: "p/plugin.json"}, {Name: "p/img/logo.svg"}}}
	require.Equal(t, "p", topFolder(a))
	a.Files = append(a.Files, File{Name: "q/x"})
	require.Equal(t, "", topFolder(a))
	require.Equal(t, "", topFolder(&Archive{Files: []File{{Name: "plugin.json"}}}))
}

func TestPlatformExecutable(t *testing.T) {
	require.Equal(t, "gpx_vllm_linux_arm64", Platform{"linux", "arm64"}.Executable("gpx_vllm"))
	require.Equal(t, "gpx_vllm_windows_amd64.exe", Platform{"windows", "amd64"}.Executable("gpx_vllm"))
}
