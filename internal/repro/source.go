package repro

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

// dumpFolder is the folder repro was given (a dump.json's folder when it
// was given a file): the only place tensor files are copied from. Files
// are opened through an os.Root, so neither a ".." nor a symbolic link,
// even one swapped in after the check, leads out of it.
type dumpFolder struct {
	abs, real string // the folder, absolute, and with its symbolic links resolved
	root      *os.Root
}

// openDumpFolder opens the folder of the dump path given to repro.
func openDumpFolder(path string) (*dumpFolder, error) {
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("the dump folder %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("the dump folder %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("the dump folder %s: %w", dir, err)
	}
	return &dumpFolder{abs: abs, real: real, root: root}, nil
}

// Close closes the folder.
func (d *dumpFolder) Close() error { return d.root.Close() }

// rel returns path relative to the folder when, by name, it lies inside it
// (before or after resolving the folder's own symbolic links).
func (d *dumpFolder) rel(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for _, base := range []string{d.abs, d.real} {
		if r, err := filepath.Rel(base, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r) {
			return r, true
		}
	}
	return "", false
}

// errOutside marks a tensor file whose path leads out of the dump folder.
var errOutside = errors.New("it leads outside the dump folder")

// open opens the regular file at rel inside the folder for reading. A path
// that leads outside (through a symbolic link) is refused with errOutside,
// naming where it leads; a FIFO or a device is refused without blocking.
func (d *dumpFolder) open(rel string) (*os.File, fs.FileInfo, error) {
	shown := filepath.Join(d.abs, rel)
	f, err := d.root.OpenFile(rel, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if to, rerr := filepath.EvalSymlinks(shown); rerr == nil {
			if _, in := d.rel(to); !in {
				return nil, nil, fmt.Errorf("%s: a symbolic link to %s: %w (%s): not copied", shown, to, errOutside, d.abs)
			}
		}
		return nil, nil, fmt.Errorf("%s: %w", shown, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s, not a regular file", safeio.Kind(info.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", shown, err)
	}
	return f, info, nil
}
