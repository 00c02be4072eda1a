package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PackResult names what Pack wrote.
type PackResult struct {
	Zip      string // path of <id>-<version>.zip
	Checksum string // path of <id>-<version>.zip.sha256
	Archive  *Archive
}

// Pack reads the built plugin in distDir (what `npm run build` and the mage
// build targets write) and writes <id>-<version>.zip and its .sha256 file
// into outDir. The zip holds one folder named after the plugin id; backend
// executables get mode 0755 and every other file 0644, whatever the build
// left; entries are stamped with the build date from plugin.json's
// "updated", so packing the same build twice gives the same bytes.
func Pack(distDir, outDir string) (*PackResult, error) {
	md, err := readDistMetadata(distDir)
	if err != nil {
		return nil, err
	}
	a, err := FromDir(distDir, md.ID)
	if err != nil {
		return nil, err
	}
	normalizeModes(a, md)
	a.Name = ArchiveName(md.ID, md.Info.Version)
	stamp, err := time.Parse(time.DateOnly, md.Info.Updated)
	if err != nil {
		return nil, fmt.Errorf("plugin.json info.updated %q is not a date (YYYY-MM-DD): %w", md.Info.Updated, err)
	}
	return writeArchive(a, outDir, stamp)
}

func readDistMetadata(distDir string) (*Metadata, error) {
	raw, err := os.ReadFile(filepath.Join(distDir, "plugin.json"))
	if err != nil {
		return nil, fmt.Errorf("%w in %s (run the frontend build first): %w", ErrNoPluginJSON, distDir, err)
	}
	var md Metadata
	if err := json.Unmarshal(raw, &md); err != nil {
		return nil, fmt.Errorf("parse %s/plugin.json: %w", distDir, err)
	}
	if md.ID == "" || md.Info.Version == "" || strings.Contains(md.Info.Version, "%") {
		return nil, fmt.Errorf("%s/plugin.json has no id or no built version (id %q, version %q)", distDir, md.ID, md.Info.Version)
	}
	return &md, nil
}

// ArchiveName is the file name of a plugin archive.
func ArchiveName(id, version string) string {
	return id + "-" + version + ".zip"
}

func normalizeModes(a *Archive, md *Metadata) {
	for i := range a.Files {
		a.Files[i].Mode = 0o644
		if md.Executable != "" && isExecutableName(a.Files[i].Name, md.ID, md.Executable) {
			a.Files[i].Mode = 0o755
		}
	}
}

func isExecutableName(name, top, executable string) bool {
	base := strings.TrimPrefix(name, top+"/")
	return strings.HasPrefix(base, executable+"_") && !strings.Contains(base, "/")
}

func writeArchive(a *Archive, outDir string, stamp time.Time) (*PackResult, error) {
	data, err := a.Bytes(stamp)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", outDir, err)
	}
	res := &PackResult{Zip: filepath.Join(outDir, a.Name), Archive: a}
	res.Checksum = res.Zip + ".sha256"
	if err := os.WriteFile(res.Zip, data, 0o644); err != nil {
		return nil, fmt.Errorf("write archive: %w", err)
	}
	if err := os.WriteFile(res.Checksum, []byte(SHA256Line(data, a.Name)), 0o644); err != nil {
		return nil, fmt.Errorf("write checksum: %w", err)
	}
	return res, nil
}
