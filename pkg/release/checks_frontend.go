package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
)

var frontendChecks = []*Check{
	{Name: "module-js", Analyzer: "modulejs", Doc: "module.js is present, non-empty and an AMD module as Grafana loads it", run: checkModuleJS},
	{Name: "build-mode", Doc: "the frontend is a production build (plugin.json buildMode)", run: checkBuildMode},
	{Name: "js-source-map", Analyzer: "jsMap", Doc: "module.js.map present; every source inside the plugin, none an absolute path; src/ matches (with the source)", run: checkSourceMaps},
	{Name: "legacy-platform", Analyzer: "legacyplatform", Doc: "no AngularJS (legacy plugin platform) in module.js", run: checkLegacyPlatform},
	{Name: "tracking-scripts", Analyzer: "trackingscripts", Doc: "no analytics or tracking scripts in module.js", run: checkTrackingScripts},
}

func checkModuleJS(p *pass) []string {
	f := p.file("module.js")
	switch {
	case f == nil:
		return []string{"module.js is missing from the top folder"}
	case len(bytes.TrimSpace(f.Data)) == 0:
		return []string{"module.js is empty"}
	case !bytes.Contains(f.Data, []byte("define(")):
		return []string{"module.js is not an AMD module (no define call); Grafana would not load it"}
	}
	return nil
}

func checkBuildMode(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	if mode, _ := p.rawMD["buildMode"].(string); mode != "production" {
		return []string{fmt.Sprintf("plugin.json buildMode is %q, want production (npm run build)", mode)}
	}
	return nil
}

var sourceMappingURL = regexp.MustCompile(`(?m)^//# sourceMappingURL=(\S+)\s*$`)

func checkSourceMaps(p *pass) []string {
	if p.file("module.js") == nil {
		return []string{"module.js is missing, so is its source map"}
	}
	if p.file("module.js.map") == nil {
		return []string{"module.js.map is missing: the catalogue compares it with the source code"}
	}
	var probs []string
	for _, f := range p.archive.Files {
		if strings.HasSuffix(f.Name, ".js") {
			probs = append(probs, p.checkMapReference(f)...)
		}
		if strings.HasSuffix(f.Name, ".js.map") {
			probs = append(probs, p.checkMap(f)...)
		}
	}
	return probs
}

func (p *pass) checkMapReference(f File) []string {
	var probs []string
	for _, m := range sourceMappingURL.FindAllSubmatch(f.Data, -1) {
		ref := string(m[1])
		target := path.Join(path.Dir(p.rel(f)), ref)
		switch {
		case strings.Contains(ref, ":") || strings.HasPrefix(ref, "/"):
			probs = append(probs, fmt.Sprintf("%s: sourceMappingURL %q points outside the archive", p.rel(f), ref))
		case p.file(target) == nil:
			probs = append(probs, fmt.Sprintf("%s: sourceMappingURL %q is not in the archive", p.rel(f), ref))
		}
	}
	return probs
}

type sourceMap struct {
	Version        int       `json:"version"`
	Sources        []string  `json:"sources"`
	SourcesContent []*string `json:"sourcesContent"`
}

func (p *pass) checkMap(f File) []string {
	var sm sourceMap
	if err := json.Unmarshal(f.Data, &sm); err != nil || sm.Version != 3 || len(sm.Sources) == 0 {
		return []string{fmt.Sprintf("%s: not a version 3 source map with sources", p.rel(f))}
	}
	var probs []string
	prefix := "webpack://" + p.top + "/"
	for i, src := range sm.Sources {
		rest, ok := strings.CutPrefix(src, prefix)
		if !ok || strings.HasPrefix(rest, "/") || strings.Contains(rest, ":\\") || strings.HasPrefix(rest, "file:") {
			probs = append(probs, fmt.Sprintf("%s: source %q is not a path inside %s (it leaks the build machine's layout)", p.rel(f), src, prefix))
			continue
		}
		// ./node_modules/ holds webpack's virtual modules (grafana-public-path.js), never files in src/.
		fromSrc := strings.HasPrefix(rest, "./") && !strings.HasPrefix(rest, "./node_modules/")
		if p.opts.SourceDir != "" && fromSrc && i < len(sm.SourcesContent) && sm.SourcesContent[i] != nil {
			probs = append(probs, p.compareSource(rest, *sm.SourcesContent[i])...)
		}
	}
	return probs
}

// compareSource is the offline half of the catalogue's source-map diff: a
// source the map says came from src/ must be that file, byte for byte.
func (p *pass) compareSource(rel, content string) []string {
	srcPath := path.Join("src", rel)
	onDisk, err := p.sourceFile(srcPath)
	if err != nil {
		return []string{fmt.Sprintf("module.js.map names %s, which the source does not have", srcPath)}
	}
	if string(onDisk) != content {
		return []string{fmt.Sprintf("module.js.map's copy of %s differs from the source: the archive was built from other code", srcPath)}
	}
	return nil
}

// legacyMarkers are the validator's signs of an AngularJS plugin.
var legacyMarkers = []string{"PanelCtrl", "QueryCtrl", "app/plugins/sdk", "angular.isNumber(", "editor.html",
	"ctrl.annotation", "getLegacyAngularInjector", "System.register("}

func checkLegacyPlatform(p *pass) []string {
	f := p.file("module.js")
	if f == nil {
		return []string{"module.js is missing"}
	}
	for _, m := range legacyMarkers {
		if bytes.Contains(f.Data, []byte(m)) {
			return []string{fmt.Sprintf("module.js contains %q: the legacy AngularJS platform, which Grafana 12 no longer loads", m)}
		}
	}
	return nil
}

var trackers = []string{"https://www.google-analytics.com", "https://api-js.mixpanel.com", "https://mixpanel.com",
	"https://www.googletagmanager.com"}

func checkTrackingScripts(p *pass) []string {
	f := p.file("module.js")
	if f == nil {
		return []string{"module.js is missing"}
	}
	for _, t := range trackers {
		if bytes.Contains(f.Data, []byte(t)) {
			return []string{fmt.Sprintf("module.js loads %s: tracking scripts are not allowed", t)}
		}
	}
	return nil
}
