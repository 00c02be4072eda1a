package release

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

var metadataChecks = []*Check{
	{Name: "metadata", Analyzer: "metadata", Doc: "plugin.json is present and is JSON", run: checkMetadata},
	{Name: "metadata-valid", Analyzer: "metadatavalid", Doc: "plugin.json follows plugin.schema.json: required fields, id, type, version, updated, known keys", run: checkMetadataValid},
	{Name: "type-suffix", Analyzer: "typesuffix", Doc: "the id ends with the plugin type", run: checkTypeSuffix},
	{Name: "plugin-name", Analyzer: "pluginname", Doc: "the name is human-friendly, not the id", run: checkPluginName},
	{Name: "discoverability", Analyzer: "discoverability", Doc: "description and keywords for the catalogue's search", run: checkDiscoverability},
	{Name: "links", Doc: "links to the source, issues and documentation, absolute https URLs", run: checkLinks},
	{Name: "grafana-dependency", Analyzer: "grafanadependency", Doc: "grafanaDependency is a lower bound (>=x.y.z), not one version or one minor", run: checkGrafanaDependency},
	{Name: "version", Analyzer: "packagejson", Doc: "semver, equal to package.json's version (with the source)", run: checkVersion},
}

func checkMetadata(p *pass) []string {
	f := p.file("plugin.json")
	if f == nil {
		return []string{"plugin.json is missing from the top folder"}
	}
	if !json.Valid(f.Data) {
		return []string{"plugin.json is not valid JSON"}
	}
	return p.needMetadata()
}

// The patterns of Grafana's plugin.schema.json (docs/sources/developers/plugins).
var (
	idPattern      = regexp.MustCompile(`^[0-9a-z]+\-([0-9a-z]+\-)?(app|panel|datasource|secretsmanager|transformer)$`)
	versionPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	updatedPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	depPattern     = regexp.MustCompile(`^(<=|>=|<|>|=|~|\^)?([0-9]+)(\.[0-9x\*]+)(\.[0-9x\*]+)?(-[0-9A-Za-z.]+)?(\s(<=|>=|<|=>)?([0-9]+)(\.[0-9x]+)(\.[0-9x]+))?$`)
	pluginTypes    = []string{"app", "datasource", "panel", "renderer", "secretsmanager", "transformer"}
	topLevelKeys   = []string{"$schema", "alerting", "annotations", "autoEnabled", "backend", "builtIn", "category",
		"dependencies", "enterpriseFeatures", "executable", "hideFromList", "id", "includes", "info", "logs",
		"metrics", "name", "pascalName", "preload", "queryOptions", "routes", "skipDataQuery", "state", "streaming",
		"tracing", "type", "iam", "roles", "extensions", "multiValueFilterOperators", "buildMode", "languages"}
)

func checkMetadataValid(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	md := p.md
	var probs []string
	add := func(cond bool, format string, args ...any) {
		if cond {
			probs = append(probs, fmt.Sprintf(format, args...))
		}
	}
	add(md.Name == "", "name is required")
	add(!idPattern.MatchString(md.ID), "id %q does not match %s", md.ID, idPattern)
	add(!contains(pluginTypes, md.Type), "type %q is not one of %s", md.Type, strings.Join(pluginTypes, ", "))
	add(!versionPattern.MatchString(md.Info.Version), "info.version %q is not a semantic version", md.Info.Version)
	add(!updatedPattern.MatchString(md.Info.Updated), "info.updated %q is not a date YYYY-MM-DD", md.Info.Updated)
	add(len(md.Info.Keywords) == 0, "info.keywords needs at least one keyword")
	add(md.Info.Logos.Small == "" || md.Info.Logos.Large == "", "info.logos needs small and large")
	add(md.Dependencies.GrafanaDependency == "", "dependencies.grafanaDependency is required")
	for _, k := range unknownKeys(p.rawMD) {
		probs = append(probs, fmt.Sprintf("unknown top-level key %q", k))
	}
	return probs
}

func unknownKeys(raw map[string]any) []string {
	var out []string
	for k := range raw {
		if !contains(topLevelKeys, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func checkTypeSuffix(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	parts := strings.Split(p.md.ID, "-")
	if parts[len(parts)-1] != p.md.Type {
		return []string{fmt.Sprintf("id %q does not end with its type %q", p.md.ID, p.md.Type)}
	}
	return nil
}

func checkPluginName(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	if p.md.Name == p.md.ID {
		return []string{fmt.Sprintf("name %q is the id; give a name people read", p.md.Name)}
	}
	return nil
}

func checkDiscoverability(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	var probs []string
	if strings.TrimSpace(p.md.Info.Description) == "" {
		probs = append(probs, "info.description is empty")
	}
	if len(p.md.Info.Keywords) == 0 {
		probs = append(probs, "info.keywords is empty")
	}
	return probs
}

// wantLinks are the links the catalogue page shows beside the README.
var wantLinks = []string{"source", "issues", "documentation"}

func checkLinks(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	var probs []string
	names := map[string]bool{}
	for _, l := range p.md.Info.Links {
		names[strings.ToLower(l.Name)] = true
		if u, err := url.Parse(l.URL); err != nil || u.Scheme != "https" || u.Host == "" {
			probs = append(probs, fmt.Sprintf("link %q: %q is not an absolute https URL", l.Name, l.URL))
		}
	}
	for _, w := range wantLinks {
		if !names[w] {
			probs = append(probs, fmt.Sprintf("info.links has no %q link", w))
		}
	}
	return probs
}

var exactVersion = regexp.MustCompile(`^=?[0-9]+\.[0-9]+\.([0-9]+|x)$`)

func checkGrafanaDependency(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	dep := p.md.Dependencies.GrafanaDependency
	switch {
	case !depPattern.MatchString(dep):
		return []string{fmt.Sprintf("grafanaDependency %q is not a version range Grafana understands", dep)}
	case exactVersion.MatchString(dep):
		return []string{fmt.Sprintf("grafanaDependency %q targets one Grafana version (or its patches only); use >=", dep)}
	case !strings.HasPrefix(dep, ">="):
		return []string{fmt.Sprintf("grafanaDependency %q should be a lower bound >=x.y.z: the oldest Grafana the plugin works with", dep)}
	}
	return nil
}

func checkVersion(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	v := p.md.Info.Version
	if !versionPattern.MatchString(v) {
		return []string{fmt.Sprintf("info.version %q is not a semantic version", v)}
	}
	if p.opts.SourceDir == "" {
		return nil
	}
	raw, err := p.sourceFile("package.json")
	if err != nil {
		return []string{fmt.Sprintf("read package.json: %v", err)}
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return []string{fmt.Sprintf("parse package.json: %v", err)}
	}
	if pkg.Version != v {
		return []string{fmt.Sprintf("plugin.json version %q is not package.json's %q", v, pkg.Version)}
	}
	return nil
}
