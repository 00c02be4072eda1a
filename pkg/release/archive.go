package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// File is one regular file of an archive; Name is slash-separated and
// includes the top folder.
type File struct {
	Name string
	Mode fs.FileMode
	Data []byte
}

// Archive is a plugin archive held in memory: the name of the zip file and
// its regular files in name order.
type Archive struct {
	Name  string
	Files []File
	// Dirs are the explicit directory entries of the zip, if any.
	Dirs []string
}

// maxFileSize bounds what ReadZip inflates per entry, so a hostile zip cannot
// exhaust memory.
const maxFileSize = 512 << 20

// ReadZip reads a zip file into memory.
func ReadZip(zipPath string) (*Archive, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	defer func() { _ = zr.Close() }()
	a := &Archive{Name: filepath.Base(zipPath)}
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			a.Dirs = append(a.Dirs, strings.TrimSuffix(zf.Name, "/"))
			continue
		}
		data, err := readEntry(zf)
		if err != nil {
			return nil, err
		}
		a.Files = append(a.Files, File{Name: zf.Name, Mode: zf.Mode(), Data: data})
	}
	a.sort()
	return a, nil
}

func readEntry(zf *zip.File) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("open %s in archive: %w", zf.Name, err)
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(io.LimitReader(rc, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s in archive: %w", zf.Name, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s in archive is larger than %d bytes", zf.Name, maxFileSize)
	}
	return data, nil
}

// FromDir reads every regular file under dir into an archive whose files lie
// under the folder top. Symbolic links are refused: a zip must not carry them.
func FromDir(dir, top string) (*Archive, error) {
	a := &Archive{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s)", p, d.Type())
		}
		return a.addFromDisk(dir, p, top)
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	a.sort()
	return a, nil
}

func (a *Archive) addFromDisk(dir, p, top string) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	a.Files = append(a.Files, File{Name: path.Join(top, filepath.ToSlash(rel)), Mode: info.Mode().Perm(), Data: data})
	return nil
}

func (a *Archive) sort() {
	sort.Slice(a.Files, func(i, j int) bool { return a.Files[i].Name < a.Files[j].Name })
}

// File returns the file at name (with its top folder), or nil.
func (a *Archive) File(name string) *File {
	for i := range a.Files {
		if a.Files[i].Name == name {
			return &a.Files[i]
		}
	}
	return nil
}

// Clone returns a deep copy, for tests that break an archive on purpose.
func (a *Archive) Clone() *Archive {
	c := &Archive{Name: a.Name, Dirs: append([]string(nil), a.Dirs...)}
	for _, f := range a.Files {
		c.Files = append(c.Files, File{Name: f.Name, Mode: f.Mode, Data: append([]byte(nil), f.Data...)})
	}
	return c
}

// WriteZip writes the archive as a zip: files in name order, Unix modes
// kept (0755 executables, 0644 the rest), every entry stamped with modTime,
// so the same input gives the same bytes.
func (a *Archive) WriteZip(w io.Writer, modTime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range a.Files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: modTime.UTC()}
		h.SetMode(f.Mode)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("close zip: %w", err)
	}
	return nil
}

// Extract writes the archive's files under dir with their modes, as
// `unzip` into Grafana's plugins folder does.
func (a *Archive) Extract(dir string) error {
	for _, f := range a.Files {
		clean := path.Clean(f.Name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("archive entry %q leaves the folder", f.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, f.Data, f.Mode.Perm()); err != nil {
			return err
		}
		// WriteFile's mode passes through the umask; set it exactly.
		if err := os.Chmod(dst, f.Mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// Bytes returns the zip encoding of the archive.
func (a *Archive) Bytes(modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	if err := a.WriteZip(&buf, modTime); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256Line is the checksum file's content in sha256sum's format, so
// `sha256sum -c NAME.sha256` verifies the archive.
func SHA256Line(zipBytes []byte, zipName string) string {
	sum := sha256.Sum256(zipBytes)
	return hex.EncodeToString(sum[:]) + "  " + zipName + "\n"
}

// ErrNoPluginJSON means the folder to pack has no plugin.json.
var ErrNoPluginJSON = errors.New("plugin.json not found")
