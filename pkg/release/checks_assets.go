package release

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

var assetChecks = []*Check{
	{Name: "logos", Analyzer: "logos", Doc: "small and large logos set, relative, in the archive, SVG with a viewBox (renders at any size)", run: checkLogos},
	{Name: "screenshots", Analyzer: "screenshots", Doc: "at least one screenshot, relative path, in the archive, a PNG/JPEG/GIF/WebP image", run: checkScreenshots},
	{Name: "unsafe-svg", Analyzer: "unsafesvg", Doc: "no scripts, foreign content or on* handlers in any SVG", run: checkUnsafeSVG},
	{Name: "includes", Doc: "every included dashboard is in the archive, is a dashboard, and is named as it is titled", run: checkIncludes},
}

// metadataPath checks a path plugin.json names (the metadatapaths analyzer)
// and returns the file it names.
func (p *pass) metadataPath(field, rel string) (*File, string) {
	if strings.TrimSpace(rel) == "" {
		return nil, field + " is empty"
	}
	if u, err := url.Parse(rel); err != nil || u.IsAbs() {
		return nil, fmt.Sprintf("%s %q must be a path relative to plugin.json", field, rel)
	}
	if strings.HasPrefix(rel, ".") || strings.HasPrefix(rel, "/") {
		return nil, fmt.Sprintf("%s %q must not start with '.' or '/'", field, rel)
	}
	f := p.file(rel)
	if f == nil {
		return nil, fmt.Sprintf("%s %q is not in the archive", field, rel)
	}
	return f, ""
}

func checkLogos(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	var probs []string
	for _, l := range []struct{ field, rel string }{
		{"info.logos.small", p.md.Info.Logos.Small}, {"info.logos.large", p.md.Info.Logos.Large},
	} {
		f, prob := p.metadataPath(l.field, l.rel)
		if prob == "" {
			prob = checkScalableSVG(f.Data)
		}
		if prob != "" {
			probs = append(probs, fmt.Sprintf("%s: %s", l.field, prob))
		}
	}
	return probs
}

// checkScalableSVG requires an <svg> root with a viewBox: without one the
// logo does not scale between the small (list) and large (plugin page) sizes.
func checkScalableSVG(data []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "not an SVG image (no <svg> element)"
		}
		if el, ok := tok.(xml.StartElement); ok {
			if el.Name.Local != "svg" {
				return fmt.Sprintf("not an SVG image (root element <%s>)", el.Name.Local)
			}
			for _, a := range el.Attr {
				if a.Name.Local == "viewBox" && len(strings.Fields(a.Value)) == 4 {
					return ""
				}
			}
			return "the <svg> has no viewBox, so it does not scale to both logo sizes"
		}
	}
}

func checkScreenshots(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	if len(p.md.Info.Screenshots) == 0 {
		return []string{"info.screenshots is empty: the catalogue shows screenshots on the plugin page"}
	}
	var probs []string
	for i, s := range p.md.Info.Screenshots {
		field := fmt.Sprintf("info.screenshots[%d] (%s)", i, s.Name)
		f, prob := p.metadataPath(field, s.Path)
		if prob == "" && imageKind(f.Data) == "" {
			prob = fmt.Sprintf("%s: %q is not a PNG, JPEG, GIF or WebP image", field, s.Path)
		}
		if prob == "" && strings.TrimSpace(s.Name) == "" {
			prob = field + ": the screenshot has no name"
		}
		if prob != "" {
			probs = append(probs, prob)
		}
	}
	return probs
}

func imageKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "jpeg"
	case bytes.HasPrefix(data, []byte("GIF8")):
		return "gif"
	case len(data) > 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return "webp"
	}
	return ""
}

// svgForbidden are the elements the validator's svgvalidate refuses.
var svgForbidden = map[string]bool{
	"annotation-xml": true, "audio": true, "colgroup": true, "iframe": true, "math": true, "mi": true, "mn": true,
	"mo": true, "ms": true, "mtext": true, "noembed": true, "noframes": true, "noscript": true, "plaintext": true,
	"script": true, "template": true, "thead": true, "xmp": true, "foreignObject": true,
}

func checkUnsafeSVG(p *pass) []string {
	var probs []string
	for _, f := range p.archive.Files {
		if strings.HasSuffix(strings.ToLower(f.Name), ".svg") {
			if err := safeSVG(f.Data); err != nil {
				probs = append(probs, fmt.Sprintf("%s: %v", p.rel(f), err))
			}
		}
	}
	return probs
}

func safeSVG(data []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if svgForbidden[el.Name.Local] {
			return fmt.Errorf("forbidden element <%s>", el.Name.Local)
		}
		for _, a := range el.Attr {
			name := strings.ToLower(a.Name.Local)
			if strings.HasPrefix(name, "on") {
				return fmt.Errorf("event handler attribute %s on <%s>", a.Name.Local, el.Name.Local)
			}
			if (name == "href") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Value)), "javascript:") {
				return fmt.Errorf("javascript: link on <%s>", el.Name.Local)
			}
		}
	}
}

func checkIncludes(p *pass) []string {
	if probs := p.needMetadata(); probs != nil {
		return probs
	}
	var probs []string
	for _, inc := range p.md.Includes {
		if inc.Type != "dashboard" {
			continue
		}
		f := p.file(path.Clean(inc.Path))
		if f == nil {
			probs = append(probs, fmt.Sprintf("dashboard %q: %s is not in the archive", inc.Name, inc.Path))
			continue
		}
		var d struct {
			Title  string            `json:"title"`
			Panels []json.RawMessage `json:"panels"`
		}
		if err := json.Unmarshal(f.Data, &d); err != nil || d.Title == "" || len(d.Panels) == 0 {
			probs = append(probs, fmt.Sprintf("dashboard %q: %s is not a dashboard with a title and panels", inc.Name, inc.Path))
		} else if d.Title != inc.Name {
			// Grafana lists the include by its name in the plugin's
			// Dashboards tab and imports it under its title: the two must agree.
			probs = append(probs, fmt.Sprintf("dashboard %q: %s is titled %q", inc.Name, inc.Path, d.Title))
		}
	}
	return probs
}
