package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Severity says whether a failed check fails the archive.
type Severity int

const (
	// Error fails the archive: the catalogue rejects it or Grafana cannot use it.
	Error Severity = iota
	// Warning is reported but does not fail: the catalogue warns too, or the
	// finding is expected until release time (an unsigned plugin).
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Platform is one GOOS/GOARCH pair Grafana runs on.
type Platform struct{ OS, Arch string }

// Platforms are the targets the catalogue asks for (the validator's
// backendbinary analyzer) and the SDK's build targets produce.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"},
}

// Executable is the file name Grafana looks for on this platform.
func (p Platform) Executable(executable string) string {
	name := executable + "_" + p.OS + "_" + p.Arch
	if p.OS == "windows" {
		name += ".exe"
	}
	return name
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Options tune Run.
type Options struct {
	// SourceDir is the repository the archive was built from. When set, the
	// checks the validator runs with the source code run too: package.json's
	// version, go.mod against the binaries' dependencies, the Go build
	// manifest against the .go files, the source map against src/.
	SourceDir string
	// Platforms whose binaries must be present; nil means all of Platforms.
	Platforms []Platform
}

// Check is one named check; Analyzer names the plugin-validator analyzer it
// implements ("" for ours).
type Check struct {
	Name     string
	Analyzer string
	Severity Severity
	Doc      string
	run      func(*pass) []string
}

// Result is the outcome of one check: no problems means it passed.
type Result struct {
	Check    *Check
	Problems []string
}

// Failed reports whether the result fails the archive.
func (r Result) Failed() bool { return len(r.Problems) > 0 && r.Check.Severity == Error }

// Report is the outcome of every check, in the order of Checks.
type Report struct{ Results []Result }

// Failed returns the results that fail the archive.
func (r Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Failed() {
			out = append(out, res)
		}
	}
	return out
}

// Result returns the result of the named check.
func (r Report) Result(name string) (Result, bool) {
	for _, res := range r.Results {
		if res.Check.Name == name {
			return res, true
		}
	}
	return Result{}, false
}

// String lists every check with ok, FAIL or WARN and its problems.
func (r Report) String() string {
	var b strings.Builder
	for _, res := range r.Results {
		status := "ok  "
		switch {
		case res.Failed():
			status = "FAIL"
		case len(res.Problems) > 0:
			status = "WARN"
		}
		fmt.Fprintf(&b, "%s %-22s %s\n", status, res.Check.Name, res.Check.Doc)
		for _, p := range res.Problems {
			fmt.Fprintf(&b, "       - %s\n", p)
		}
	}
	fmt.Fprintf(&b, "%d checks, %d failed\n", len(r.Results), len(r.Failed()))
	return b.String()
}

// pass is what every check reads: the archive, its top folder and its
// parsed plugin.json (nil when missing or invalid).
type pass struct {
	archive *Archive
	top     string
	md      *Metadata
	rawMD   map[string]any
	opts    Options
}

// Run runs every check of Checks over the archive.
func Run(a *Archive, opts Options) Report {
	if opts.Platforms == nil {
		opts.Platforms = Platforms
	}
	p := newPass(a, opts)
	var r Report
	for _, c := range Checks() {
		r.Results = append(r.Results, Result{Check: c, Problems: c.run(p)})
	}
	return r
}

func newPass(a *Archive, opts Options) *pass {
	p := &pass{archive: a, opts: opts, top: topFolder(a)}
	if f := p.file("plugin.json"); f != nil {
		var md Metadata
		if json.Unmarshal(f.Data, &md) == nil && json.Unmarshal(f.Data, &p.rawMD) == nil {
			p.md = &md
		}
	}
	return p
}

// topFolder is the first path element shared by every file, or "".
func topFolder(a *Archive) string {
	top := ""
	for _, f := range a.Files {
		first, _, ok := strings.Cut(f.Name, "/")
		if !ok || (top != "" && first != top) {
			return ""
		}
		top = first
	}
	return top
}

// file returns the file at rel inside the top folder, or nil.
func (p *pass) file(rel string) *File {
	if p.top == "" {
		return nil
	}
	return p.archive.File(p.top + "/" + rel)
}

// rel is a file's path inside the top folder.
func (p *pass) rel(f File) string { return strings.TrimPrefix(f.Name, p.top+"/") }

// needMetadata is the problem every plugin.json check reports when there is
// no valid plugin.json to check.
func (p *pass) needMetadata() []string {
	if p.md == nil {
		return []string{"no valid plugin.json in the archive's top folder"}
	}
	return nil
}

func (p *pass) sourceFile(rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(p.opts.SourceDir, filepath.FromSlash(rel)))
}

// Checks lists every check in the order Run runs them.
func Checks() []*Check {
	var all []*Check
	all = append(all, layoutChecks...)
	all = append(all, metadataChecks...)
	all = append(all, assetChecks...)
	all = append(all, frontendChecks...)
	all = append(all, docChecks...)
	all = append(all, backendChecks...)
	return all
}
