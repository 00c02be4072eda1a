package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
)

var backendChecks = []*Check{
	{Name: "backend-binary", Analyzer: "backendbinary", Doc: "backend, executable and alerting agree; a binary <executable>_<os>_<arch>[.exe] for every platform", run: checkBackendBinary},
	{Name: "binary-permissions", Analyzer: "binarypermissions", Doc: "every non-Windows binary has mode 0755 exactly", run: checkBinaryPermissions},
	{Name: "binary-format", Doc: "each binary is an executable of its platform (ELF, Mach-O, PE; amd64 or arm64)", run: checkBinaryFormat},
	{Name: "go-build-info", Analyzer: "gobuildinfo", Doc: "Go build info readable; CGO_ENABLED=0; SDK build info has this id and version; dependencies as in go.mod (with the source)", run: checkGoBuildInfo},
	{Name: "clean-build", Analyzer: "gobuildinfo", Severity: Warning, Doc: "built from a committed tree (the catalogue refuses vcs.modified=true)", run: checkCleanBuild},
	{Name: "go-manifest", Analyzer: "go-manifest", Doc: "go_plugin_build_manifest present; matches every .go file of the source (with the source)", run: checkGoManifest},
}

// binaries returns, per required platform, the archive file Grafana would
// start there (nil when missing).
func (p *pass) binaries() map[Platform]*File {
	out := map[Platform]*File{}
	for _, pl := range p.opts.Platforms {
		out[pl] = p.file(pl.Executable(p.md.Executable))
	}
	return out
}

func checkBackendBinary(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	md := p.md
	switch {
	case md.Alerting && !md.Backend:
		return []string{"alerting is true but backend is false: alerting needs the backend"}
	case md.Executable != "" && !md.Backend:
		return []string{"executable is set but backend is false"}
	case md.Backend && md.Executable == "":
		return []string{"backend is true but no executable is named"}
	case md.Executable == "":
		return nil
	}
	var probs []string
	for _, pl := range p.opts.Platforms {
		if p.file(pl.Executable(md.Executable)) == nil {
			probs = append(probs, fmt.Sprintf("no binary for %s: %s is missing", pl, pl.Executable(md.Executable)))
		}
	}
	return append(probs, p.strayBinaries()...)
}

// strayBinaries are files that look like the executable but match no
// platform's name: Grafana would never start them.
func (p *pass) strayBinaries() []string {
	want := map[string]bool{}
	for _, pl := range Platforms {
		want[pl.Executable(p.md.Executable)] = true
	}
	var probs []string
	for _, f := range p.archive.Files {
		rel := p.rel(f)
		if strings.HasPrefix(rel, p.md.Executable) && !want[rel] && !strings.Contains(rel, "/") {
			probs = append(probs, fmt.Sprintf("%s is named like the executable but is no platform's <executable>_<os>_<arch>[.exe]", rel))
		}
	}
	return probs
}

func checkBinaryPermissions(p *pass) []string {
	if probs := p.needMetadata(); probs != nil || p.md.Executable == "" {
		return probs
	}
	var probs []string
	for _, f := range p.archive.Files {
		rel := p.rel(f)
		if !strings.HasPrefix(rel, p.md.Executable) || strings.HasSuffix(rel, ".exe") {
			continue
		}
		if perm := f.Mode.Perm(); perm != 0o755 || !f.Mode.IsRegular() {
			probs = append(probs, fmt.Sprintf("%s has mode %04o (%s), want 0755: Grafana cannot start it", rel, perm, f.Mode))
		}
	}
	return probs
}

func checkBinaryFormat(p *pass) []string {
	if probs := p.needMetadata(); probs != nil || p.md.Executable == "" {
		return probs
	}
	var probs []string
	for _, pl := range p.opts.Platforms {
		f := p.file(pl.Executable(p.md.Executable))
		if f == nil {
			continue // backend-binary reports it
		}
		if got := objectPlatform(f.Data); got != pl.String() {
			probs = append(probs, fmt.Sprintf("%s is a %s executable, not %s", p.rel(*f), got, pl))
		}
	}
	return probs
}

// objectPlatform reads an executable's header: "linux/amd64", or what it is.
func objectPlatform(data []byte) string {
	r := bytes.NewReader(data)
	if f, err := elf.NewFile(r); err == nil {
		return "linux/" + map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine] + elfType(f)
	}
	if f, err := macho.NewFile(r); err == nil {
		return "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	}
	if f, err := pe.NewFile(r); err == nil {
		return "windows/" + map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	return "unknown (not ELF, Mach-O or PE)"
}

func elfType(f *elf.File) string {
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return " (not an executable: " + f.Type.String() + ")"
	}
	return ""
}

// sdkBuildInfo is the JSON the SDK's mage build puts in the binary with -X.
type sdkBuildInfo struct {
	PluginID string `json:"pluginID"`
	Version  string `json:"version"`
}

const buildInfoVar = "github.com/grafana/grafana-plugin-sdk-go/build/buildinfo.buildInfoJSON="

func checkGoBuildInfo(p *pass) []string {
	if probs := p.needMetadata(); probs != nil || p.md.Executable == "" {
		return probs
	}
	gomod, err := p.goModRequires()
	if err != nil {
		return []string{err.Error()}
	}
	var probs []string
	for pl, f := range p.binaries() {
		if f != nil {
			probs = append(probs, p.checkBinaryBuildInfo(pl, f, gomod)...)
		}
	}
	sort.Strings(probs)
	return probs
}

func (p *pass) checkBinaryBuildInfo(pl Platform, f *File, gomod map[string]string) []string {
	name := pl.Executable(p.md.Executable)
	info, err := buildinfo.Read(bytes.NewReader(f.Data))
	if err != nil {
		return []string{fmt.Sprintf("%s: no Go build info: %v", name, err)}
	}
	var probs []string
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" {
		probs = append(probs, fmt.Sprintf("%s: built with CGO_ENABLED=%q, want 0 (cgo-free, as the SDK builds)", name, settings["CGO_ENABLED"]))
	}
	probs = append(probs, p.checkSDKBuildInfo(name, settings["-ldflags"])...)
	for _, dep := range info.Deps {
		probs = append(probs, checkDep(name, dep, gomod)...)
	}
	return probs
}

func (p *pass) checkSDKBuildInfo(name, ldflags string) []string {
	_, after, ok := strings.Cut(ldflags, buildInfoVar)
	if !ok {
		return []string{fmt.Sprintf("%s: no SDK build info (-X %s…): build with the SDK's mage targets", name, strings.TrimSuffix(buildInfoVar, "="))}
	}
	raw, _, _ := strings.Cut(after, "'")
	var bi sdkBuildInfo
	if err := json.Unmarshal([]byte(raw), &bi); err != nil {
		return []string{fmt.Sprintf("%s: SDK build info %q is not JSON", name, raw)}
	}
	var probs []string
	if bi.PluginID != p.md.ID {
		probs = append(probs, fmt.Sprintf("%s: built for plugin id %q, plugin.json says %q", name, bi.PluginID, p.md.ID))
	}
	if bi.Version != p.md.Info.Version {
		probs = append(probs, fmt.Sprintf("%s: built as version %q, plugin.json says %q", name, bi.Version, p.md.Info.Version))
	}
	return probs
}

func checkDep(binary string, dep *debug.Module, gomod map[string]string) []string {
	if gomod == nil {
		return nil
	}
	if dep.Replace != nil {
		dep = dep.Replace
	}
	want, ok := gomod[dep.Path]
	switch {
	case !ok:
		return []string{fmt.Sprintf("%s: dependency %s@%s is not in go.mod", binary, dep.Path, dep.Version)}
	case want != dep.Version:
		return []string{fmt.Sprintf("%s: dependency %s is %s in the binary, %s in go.mod", binary, dep.Path, dep.Version, want)}
	}
	return nil
}

// goModRequires reads the require directives of the source's go.mod (nil
// without a source).
func (p *pass) goModRequires() (map[string]string, error) {
	if p.opts.SourceDir == "" {
		return nil, nil
	}
	raw, err := p.sourceFile("go.mod")
	if err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	return parseRequires(raw), nil
}

func parseRequires(gomod []byte) map[string]string {
	out := map[string]string{}
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "require" && len(fields) == 2 && fields[1] == "(":
			inBlock = true
		case inBlock && fields[0] == ")":
			inBlock = false
		case inBlock && len(fields) == 2:
			out[fields[0]] = fields[1]
		case fields[0] == "require" && len(fields) == 3:
			out[fields[1]] = fields[2]
		}
	}
	return out
}

func checkCleanBuild(p *pass) []string {
	if p.md == nil || p.md.Executable == "" {
		return nil
	}
	var probs []string
	for pl, f := range p.binaries() {
		if f == nil {
			continue
		}
		info, err := buildinfo.Read(bytes.NewReader(f.Data))
		if err != nil {
			continue // go-build-info reports it
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.modified" && s.Value == "true" {
				probs = append(probs, fmt.Sprintf("%s: built with uncommitted changes", pl.Executable(p.md.Executable)))
			}
		}
	}
	sort.Strings(probs)
	return probs
}

func checkGoManifest(p *pass) []string {
	if p.md == nil || !p.md.Backend {
		return p.needMetadata()
	}
	f := p.file("go_plugin_build_manifest")
	if f == nil {
		return []string{"go_plugin_build_manifest is missing (the SDK's mage build writes it)"}
	}
	manifest, err := parseGoManifest(f.Data)
	if err != nil {
		return []string{err.Error()}
	}
	if p.opts.SourceDir == "" {
		return nil
	}
	source, err := hashGoFiles(p.opts.SourceDir)
	if err != nil {
		return []string{err.Error()}
	}
	return diffManifest(manifest, source)
}

func parseGoManifest(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, file, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(file, ":") {
			return nil, fmt.Errorf("go_plugin_build_manifest: line %q is not sha256:path", line)
		}
		out[strings.ReplaceAll(file, "\\", "/")] = sum
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("go_plugin_build_manifest lists no files")
	}
	return out, nil
}

// hashGoFiles hashes every .go file under dir as the SDK's manifest does
// (node_modules skipped).
func hashGoFiles(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash the source's .go files: %w", err)
	}
	return out, nil
}

func diffManifest(manifest, source map[string]string) []string {
	var probs []string
	for file, sum := range source {
		switch got, ok := manifest[file]; {
		case !ok:
			probs = append(probs, fmt.Sprintf("go_plugin_build_manifest lacks %s: the binaries were built from other sources", file))
		case got != sum:
			probs = append(probs, fmt.Sprintf("go_plugin_build_manifest: %s changed since the build", file))
		}
	}
	for file := range manifest {
		if _, ok := source[file]; !ok {
			probs = append(probs, fmt.Sprintf("go_plugin_build_manifest lists %s, which the source does not have", file))
		}
	}
	sort.Strings(probs)
	return probs
}
