package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The node agent's release archive: one .tar.gz per Linux platform, holding
// one folder vllm-node-agent-<version>-linux-<arch>/ with the binary, the
// systemd unit and its environment file (deploy/systemd/) and the LICENSE.
const (
	AgentBinary = "vllm-node-agent"
	// AgentPackage is the agent's main package, as Go's build info names it.
	AgentPackage = "github.com/inferops/vllm-datasource/cmd/vllm-node-agent"
	// AgentMaxGlibc is the newest glibc symbol version the agent may need:
	// it runs on hosts with glibc 2.34 or later (RHEL 9, Ubuntu 22.04,
	// Debian 12). The release is built on Debian 12 (glibc 2.36).
	AgentMaxGlibc = "2.34"
)

// AgentPlatforms are the platforms the node agent is released for: Linux
// only, the GPU nodes' system.
var AgentPlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}

// agentSourceFiles maps each file of the archive's folder to the repository
// file it is a copy of ("" for the binary).
var agentSourceFiles = map[string]string{
	AgentBinary:               "",
	"vllm-node-agent.service": "deploy/systemd/vllm-node-agent.service",
	"vllm-node-agent.env":     "deploy/systemd/vllm-node-agent.env",
	"LICENSE":                 "LICENSE",
}

// AgentArchiveName is the file name of the node agent archive for p.
func AgentArchiveName(version string, p Platform) string {
	return agentTop(version, p) + ".tar.gz"
}

func agentTop(version string, p Platform) string {
	return AgentBinary + "-" + version + "-" + p.OS + "-" + p.Arch
}

// AgentOptions say what a node agent archive must be.
type AgentOptions struct {
	Version  string
	Platform Platform
	// SourceDir, when set, is the repository: the archive's unit, environment
	// file and LICENSE must be its files.
	SourceDir string
}

// ReadTarGz reads a .tar.gz file into memory: regular files only (links and
// other entries are an error, as for a zip).
func ReadTarGz(archivePath string) (*Archive, error) {
	f, err := os.Open(archivePath)
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archivePath, err)
	}
	a := &Archive{Name: filepath.Base(archivePath)}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archivePath, err)
		}
		if err := a.addTarEntry(tr, h); err != nil {
			return nil, err
		}
	}
	a.sort()
	return a, nil
}

func (a *Archive) addTarEntry(r io.Reader, h *tar.Header) error {
	name := strings.TrimPrefix(h.Name, "./")
	switch h.Typeflag {
	case tar.TypeDir:
		if name = strings.TrimSuffix(name, "/"); name != "" && name != "." {
			a.Dirs = append(a.Dirs, name)
		}
		return nil
	case tar.TypeReg:
	default:
		return fmt.Errorf("%s in archive is not a regular file or folder (tar type %q)", h.Name, h.Typeflag)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("read %s in archive: %w", h.Name, err)
	}
	if len(data) > maxFileSize {
		return fmt.Errorf("%s in archive is larger than %d bytes", h.Name, maxFileSize)
	}
	a.Files = append(a.Files, File{Name: name, Mode: h.FileInfo().Mode(), Data: data})
	return nil
}

// CheckAgent checks a node agent archive and returns its problems; none
// means it passed. It checks the layout and modes, that the binary is an
// executable of the platform built with cgo (NVML needs it) at this
// version, that it loads NVML at run time rather than linking it (so it
// starts, and answers --help, on a host without the driver), and the glibc
// it needs.
func CheckAgent(a *Archive, opts AgentOptions) []string {
	probs := checkAgentLayout(a, opts)
	// The binary of whatever folder the archive has: a wrong folder name is a
	// layout problem, and the binary is still checked.
	bin := a.File(topFolder(a) + "/" + AgentBinary)
	if bin == nil {
		return probs
	}
	if bin.Mode.Perm() != 0o755 {
		probs = append(probs, fmt.Sprintf("%s has mode %04o, want 0755", AgentBinary, bin.Mode.Perm()))
	}
	if got := objectPlatform(bin.Data); got != opts.Platform.String() {
		probs = append(probs, fmt.Sprintf("%s is a %s executable, not %s", AgentBinary, got, opts.Platform))
	}
	probs = append(probs, checkAgentBuildInfo(bin.Data, opts)...)
	return append(probs, checkAgentLinking(bin.Data)...)
}

func checkAgentLayout(a *Archive, opts AgentOptions) []string {
	top := agentTop(opts.Version, opts.Platform)
	var probs []string
	if want := AgentArchiveName(opts.Version, opts.Platform); a.Name != want {
		probs = append(probs, fmt.Sprintf("archive is named %s, want %s", a.Name, want))
	}
	for _, f := range a.Files {
		rel, ok := strings.CutPrefix(f.Name, top+"/")
		if _, known := agentSourceFiles[rel]; !ok || !known {
			probs = append(probs, fmt.Sprintf("%s: not a file of the agent archive (want %s/{%s})", f.Name, top, strings.Join(agentFileNames(), ",")))
		}
	}
	for _, rel := range agentFileNames() {
		f := a.File(top + "/" + rel)
		if f == nil {
			probs = append(probs, fmt.Sprintf("%s/%s is missing", top, rel))
			continue
		}
		probs = append(probs, checkAgentCopy(f, agentSourceFiles[rel], opts.SourceDir)...)
	}
	return probs
}

func agentFileNames() []string {
	names := make([]string, 0, len(agentSourceFiles))
	for n := range agentSourceFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkAgentCopy: a file copied from the repository is that file, now.
func checkAgentCopy(f *File, source, sourceDir string) []string {
	if source == "" || sourceDir == "" {
		return nil
	}
	want, err := os.ReadFile(filepath.Join(sourceDir, filepath.FromSlash(source)))
	if err != nil {
		return []string{fmt.Sprintf("read %s: %v", source, err)}
	}
	if !bytes.Equal(f.Data, want) {
		return []string{fmt.Sprintf("%s differs from %s in the source", path.Base(f.Name), source)}
	}
	return nil
}

func checkAgentBuildInfo(data []byte, opts AgentOptions) []string {
	info, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		return []string{fmt.Sprintf("%s: no Go build info: %v", AgentBinary, err)}
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var probs []string
	if info.Path != AgentPackage {
		probs = append(probs, fmt.Sprintf("%s is built from %s, want %s", AgentBinary, info.Path, AgentPackage))
	}
	if settings["CGO_ENABLED"] != "1" {
		probs = append(probs, fmt.Sprintf("%s: built with CGO_ENABLED=%q, want 1: without cgo it cannot load NVML", AgentBinary, settings["CGO_ENABLED"]))
	}
	if got := settings["GOOS"] + "/" + settings["GOARCH"]; got != opts.Platform.String() {
		probs = append(probs, fmt.Sprintf("%s: built for %s, want %s", AgentBinary, got, opts.Platform))
	}
	return append(probs, checkAgentVersion(data, opts.Version)...)
}

// checkAgentVersion reads main.version out of the executable (the value
// -X main.version= set) and compares it with the release's version.
func checkAgentVersion(data []byte, want string) []string {
	got, err := ELFStringVar(data, "main.version")
	if err != nil {
		return []string{fmt.Sprintf("%s: %v (build with -ldflags \"-X main.version=%s\", without -s)", AgentBinary, err, want)}
	}
	if got != want {
		return []string{fmt.Sprintf("%s: main.version is %q, want %q: --version would not name this release", AgentBinary, got, want)}
	}
	return nil
}

// ELFStringVar reads the value of a Go string variable (such as one set
// with -ldflags -X) from a 64-bit little-endian ELF executable with its
// symbol table: the symbol points at the string header (data pointer,
// length), which points at the bytes.
func ELFStringVar(data []byte, symbol string) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not ELF: %w", err)
	}
	syms, err := f.Symbols()
	if err != nil {
		return "", fmt.Errorf("no symbol table: %w", err)
	}
	for _, s := range syms {
		if s.Name != symbol {
			continue
		}
		header, err := readELFAddr(f, s.Value, 16)
		if err != nil {
			return "", fmt.Errorf("%s: %w", symbol, err)
		}
		ptr, n := binary.LittleEndian.Uint64(header[:8]), binary.LittleEndian.Uint64(header[8:])
		if n > 4096 {
			return "", fmt.Errorf("%s: length %d is not a version's", symbol, n)
		}
		b, err := readELFAddr(f, ptr, n)
		return string(b), err
	}
	return "", fmt.Errorf("no symbol %s", symbol)
}

// readELFAddr reads n bytes at a virtual address from the section holding it.
func readELFAddr(f *elf.File, addr, n uint64) ([]byte, error) {
	for _, sec := range f.Sections {
		if sec.Type == elf.SHT_NOBITS || addr < sec.Addr || addr+n > sec.Addr+sec.Size {
			continue
		}
		b := make([]byte, n)
		if _, err := sec.ReadAt(b, int64(addr-sec.Addr)); err != nil {
			return nil, fmt.Errorf("read %#x in %s: %w", addr, sec.Name, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("address %#x is in no section with contents", addr)
}

// checkAgentLinking: NVML is loaded with dlopen (go-nvml), never a
// dependency of the executable, and no symbol needs a glibc newer than
// AgentMaxGlibc.
func checkAgentLinking(data []byte) []string {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil // the platform check reports it
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return []string{fmt.Sprintf("%s: read its shared libraries: %v", AgentBinary, err)}
	}
	var probs []string
	for _, lib := range libs {
		if strings.Contains(lib, "nvidia") {
			probs = append(probs, fmt.Sprintf("%s links %s: it would not start without the driver; NVML must be loaded at run time", AgentBinary, lib))
		}
	}
	if len(libs) == 0 {
		probs = append(probs, fmt.Sprintf("%s is statically linked: it cannot dlopen libnvidia-ml", AgentBinary))
	}
	need, err := NeededGlibc(f)
	if err != nil {
		return append(probs, err.Error())
	}
	if compareVersions(need, AgentMaxGlibc) > 0 {
		probs = append(probs, fmt.Sprintf("%s needs glibc %s, newer than the documented minimum %s", AgentBinary, need, AgentMaxGlibc))
	}
	return probs
}

// NeededGlibc is the newest GLIBC_x.y symbol version an ELF executable
// imports ("" when it imports none).
func NeededGlibc(f *elf.File) (string, error) {
	syms, err := f.ImportedSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", fmt.Errorf("read imported symbols: %w", err)
	}
	newest := ""
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if ok && compareVersions(v, newest) > 0 {
			newest = v
		}
	}
	return newest, nil
}

// compareVersions compares dotted numeric versions ("" is the oldest).
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		x, y := versionPart(as, i), versionPart(bs, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return -1
	}
	n, err := strconv.Atoi(parts[i])
	if err != nil {
		return -1
	}
	return n
}
