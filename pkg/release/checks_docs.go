package release

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

var docChecks = []*Check{
	{Name: "readme", Analyzer: "readme", Doc: "README.md present; not the template's; no developer jargon; build placeholders filled", run: checkReadme},
	{Name: "readme-links", Analyzer: "brokenlinks", Doc: "every README link and image is absolute (https) or an in-page anchor, as the catalogue page needs", run: checkReadmeLinks},
	{Name: "license", Analyzer: "license", Doc: "LICENSE present: Apache-2.0 or AGPL-3.0", run: checkLicense},
	{Name: "changelog", Analyzer: "changelog", Doc: "CHANGELOG.md present, with an entry for this version", run: checkChangelog},
	{Name: "signature", Analyzer: "manifest", Severity: Warning, Doc: "signed (MANIFEST.txt); unsigned loads only where allow_loading_unsigned_plugins names the id", run: checkSignature},
}

var (
	templateReadme = regexp.MustCompile(`^# Grafana (Panel|Data Source|Data Source Backend) Plugin Template`)
	jargon         = []string{"yarn", "nodejs"}
	placeholder    = regexp.MustCompile(`%(VERSION|TODAY|PLUGIN_ID)%`)
)

func checkReadme(p *pass) []string {
	f := p.file("README.md")
	if f == nil {
		return []string{"README.md is missing from the top folder"}
	}
	var probs []string
	if templateReadme.Match(f.Data) {
		probs = append(probs, "README.md is the plugin template's README")
	}
	if placeholder.Match(f.Data) {
		probs = append(probs, fmt.Sprintf("README.md still holds the build placeholder %s", placeholder.Find(f.Data)))
	}
	for _, w := range jargon {
		if bytes.Contains(f.Data, []byte(w)) {
			probs = append(probs, fmt.Sprintf("README.md mentions %q: keep developer documentation out of the plugin page", w))
		}
	}
	return probs
}

// mdLink matches [text](target) and ![alt](target), as the validator does.
var mdLink = regexp.MustCompile(`\[[^\]]*?\]\((.+?)\)`)

func checkReadmeLinks(p *pass) []string {
	f := p.file("README.md")
	if f == nil {
		return []string{"README.md is missing"}
	}
	var probs []string
	for _, m := range mdLink.FindAllSubmatch(f.Data, -1) {
		target := strings.Fields(string(m[1]))
		if len(target) == 0 {
			continue
		}
		t := target[0]
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "mailto:") || strings.HasPrefix(t, "https://") {
			continue
		}
		probs = append(probs, fmt.Sprintf("README.md links %q: relative and http links break on the catalogue page; use https://", t))
	}
	return probs
}

func checkLicense(p *pass) []string {
	f := p.file("LICENSE")
	if f == nil {
		return []string{"LICENSE is missing from the top folder"}
	}
	text := string(f.Data)
	apache := strings.Contains(text, "Apache License") && strings.Contains(text, "Version 2.0") &&
		strings.Contains(text, "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION")
	agpl := strings.Contains(text, "GNU AFFERO GENERAL PUBLIC LICENSE") && strings.Contains(text, "Version 3")
	if !apache && !agpl {
		return []string{"LICENSE is neither the Apache License 2.0 nor the AGPL 3.0 text the catalogue accepts"}
	}
	return nil
}

func checkChangelog(p *pass) []string {
	f := p.file("CHANGELOG.md")
	if f == nil {
		return []string{"CHANGELOG.md is missing from the top folder"}
	}
	if len(bytes.TrimSpace(f.Data)) == 0 {
		return []string{"CHANGELOG.md is empty"}
	}
	if p.md == nil {
		return nil
	}
	heading := regexp.MustCompile(`(?m)^#+\s*\[?v?` + regexp.QuoteMeta(p.md.Info.Version) + `\b`)
	if !heading.Match(f.Data) {
		return []string{fmt.Sprintf("CHANGELOG.md has no heading for version %s", p.md.Info.Version)}
	}
	return nil
}

func checkSignature(p *pass) []string {
	f := p.file("MANIFEST.txt")
	if f == nil {
		return []string{"unsigned (no MANIFEST.txt): Grafana loads it only with allow_loading_unsigned_plugins = " +
			p.top + ", or after signing (docs/install.md)"}
	}
	if !bytes.Contains(f.Data, []byte("-----BEGIN PGP SIGNED MESSAGE-----")) {
		return []string{"MANIFEST.txt is not a signed manifest"}
	}
	return nil
}
