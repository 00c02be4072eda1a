package release

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

var layoutChecks = []*Check{
	{Name: "archive", Analyzer: "archive", Doc: "one top folder holding the plugin; no dist/ inside it", run: checkArchive},
	{Name: "archive-name", Analyzer: "archivename", Doc: "the top folder is the plugin id; the zip is <id>-<version>.zip", run: checkArchiveName},
	{Name: "nested-plugins", Analyzer: "includesnested", Doc: "no plugin.json below the top folder (this plugin nests none)", run: checkNested},
	{Name: "no-dev-leftovers", Doc: "no sources, tests, dependencies, VCS or editor files, logs or env files", run: checkLeftovers},
	{Name: "backend-debug", Analyzer: "backenddebug", Doc: "no standalone.txt or pid.txt (debug-mode markers)", run: checkBackendDebug},
}

func checkArchive(p *pass) []string {
	if len(p.archive.Files) == 0 {
		return []string{"the archive is empty"}
	}
	if p.top == "" {
		return []string{fmt.Sprintf("the archive must hold exactly one top folder; found %s", strings.Join(topEntries(p.archive), ", "))}
	}
	for _, f := range p.archive.Files {
		if strings.HasPrefix(f.Name, p.top+"/dist/") {
			return []string{"the top folder holds dist/: rename dist to the plugin id and put it at the root"}
		}
	}
	return nil
}

func topEntries(a *Archive) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range a.Files {
		first, _, ok := strings.Cut(f.Name, "/")
		if !ok {
			first += " (a file)"
		}
		if !seen[first] {
			seen[first] = true
			out = append(out, first)
		}
	}
	return out
}

func checkArchiveName(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	var probs []string
	if p.top != p.md.ID {
		probs = append(probs, fmt.Sprintf("top folder %q is not the plugin id %q", p.top, p.md.ID))
	}
	if want := ArchiveName(p.md.ID, p.md.Info.Version); p.archive.Name != want {
		probs = append(probs, fmt.Sprintf("archive is named %q, want %q", p.archive.Name, want))
	}
	return probs
}

func checkNested(p *pass) []string {
	var probs []string
	for _, f := range p.archive.Files {
		if path.Base(f.Name) == "plugin.json" && p.rel(f) != "plugin.json" {
			probs = append(probs, fmt.Sprintf("%s: a nested plugin not declared in includes", f.Name))
		}
	}
	return probs
}

// leftovers are files a build must not ship: they reveal the build machine,
// bloat the archive, or (env files) may hold secrets.
var leftovers = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(^|/)node_modules/`), "npm dependencies"},
	{regexp.MustCompile(`(^|/)\.git(/|$)`), "version control"},
	{regexp.MustCompile(`(^|/)\.(DS_Store|idea|vscode|eslintcache)(/|$)`), "editor or OS files"},
	{regexp.MustCompile(`\.(ts|tsx|go|scss)$`), "source code"},
	{regexp.MustCompile(`(\.test\.[jt]sx?|_test\.go|\.test)$`), "tests"},
	{regexp.MustCompile(`(^|/)(coverage|test-output|e2e)/`), "test output"},
	{regexp.MustCompile(`(^|/)\.env(\..*)?$`), "environment files (may hold secrets)"},
	{regexp.MustCompile(`\.(log|orig|rej|swp)$|~$`), "logs and editor backups"},
	{regexp.MustCompile(`(^|/)(package(-lock)?\.json|tsconfig\.json|Magefile\.go|go\.(mod|sum))$`), "build files"},
}

func checkLeftovers(p *pass) []string {
	var probs []string
	for _, f := range p.archive.Files {
		for _, l := range leftovers {
			if l.re.MatchString(p.rel(f)) {
				probs = append(probs, fmt.Sprintf("%s: %s", p.rel(f), l.why))
				break
			}
		}
	}
	return probs
}

func checkBackendDebug(p *pass) []string {
	var probs []string
	for _, f := range p.archive.Files {
		if base := path.Base(f.Name); base == "standalone.txt" || base == "pid.txt" {
			probs = append(probs, fmt.Sprintf("%s: Grafana would connect to a standalone debug process instead of starting the binary", p.rel(f)))
		}
	}
	return probs
}
