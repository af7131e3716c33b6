package outguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// absent reports whether err says a path does not exist (or cannot exist:
// a file where a folder was expected).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// resolve makes path absolute and resolves the symbolic links of its
// longest existing prefix. It fails when a part of the path exists but
// cannot be followed (a link loop, a folder that cannot be searched):
// where the path leads is then unknown.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !absent(err) {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// Within reports whether path is dir or lies below it, by name after
// resolving symbolic links, and by identity: an existing folder on path's
// way up that is dir itself (a bind mount, another spelling on a
// case-insensitive file system) counts. When dir is a file, only dir
// itself is within it. An error means the answer is unknown; a caller that
// guards a dump then refuses.
func Within(path, dir string) (bool, error) {
	d, err := folderOf(dir)
	if err != nil {
		return false, err
	}
	i, err := withinAny(path, []folder{d})
	return i == 0, err
}

// folder is a folder (or file) resolved, with its information; info is nil
// when it does not exist.
type folder struct {
	dir  string
	info fs.FileInfo
}

// folderOf resolves dir and looks at it.
func folderOf(dir string) (folder, error) {
	d, err := resolve(dir)
	if err != nil {
		return folder{}, err
	}
	di, err := os.Stat(d)
	switch {
	case err != nil && !absent(err):
		return folder{}, fmt.Errorf("stat %s: %w", d, err)
	case err != nil:
		return folder{dir: d}, nil
	}
	return folder{dir: d, info: di}, nil
}

// withinAny returns the index of the first of dirs that path is or lies
// below, as Within tells it, or -1 when there is none. path is resolved
// once, whatever the number of dirs.
func withinAny(path string, dirs []folder) (int, error) {
	pl, err := placeOf(path)
	if err != nil {
		return -1, err
	}
	for i, d := range dirs {
		in, err := pl.in(d)
		if err != nil {
			return -1, fmt.Errorf("compare %s with %s: %w", path, d.dir, err)
		}
		if in {
			return i, nil
		}
	}
	return -1, nil
}

// place is where a path leads: its resolved path, and the folders on its
// way up that exist, to be told by identity.
type place struct {
	path string
	ups  []fs.FileInfo
}

// placeOf resolves path and looks at the folders on its way up.
func placeOf(path string) (place, error) {
	p, err := resolve(path)
	if err != nil {
		return place{}, err
	}
	pl := place{path: p}
	for a := p; ; a = filepath.Dir(a) {
		ai, err := os.Stat(a)
		switch {
		case err == nil:
			pl.ups = append(pl.ups, ai)
		case !absent(err):
			return place{}, fmt.Errorf("stat %s: %w", a, err)
		}
		if filepath.Dir(a) == a {
			return pl, nil
		}
	}
}

// in reports whether the place is the folder f or lies below it.
func (pl place) in(f folder) (bool, error) {
	d, di := f.dir, f.info
	if di != nil && !di.IsDir() {
		return pl.path == d, nil
	}
	if filepath.VolumeName(pl.path) != filepath.VolumeName(d) {
		return false, nil
	}
	rel, err := filepath.Rel(d, pl.path)
	if err != nil {
		return false, err
	}
	if rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return true, nil
	}
	if di == nil {
		return false, nil
	}
	for _, ai := range pl.ups {
		if os.SameFile(ai, di) {
			return true, nil
		}
	}
	return false, nil
}

// Inside reports whether path lies within the dump at dumpPath (a folder,
// or a dump.json, which stands for its folder) or within a folder one of
// its mode, step or rank folders leads to as a symbolic link, failing
// closed: when
// either place cannot be told, it reports true. The libraries that write
// (repro, export) check with it; the command checks with a Guard.
func Inside(path, dumpPath string) bool {
	if dumpPath == "" {
		return false
	}
	dir := dumpPath
	if info, err := os.Stat(dumpPath); err == nil && !info.IsDir() {
		dir = filepath.Dir(dumpPath)
	}
	f, err := folderOf(dir)
	if err != nil {
		return true
	}
	dirs := []folder{f}
	for _, l := range linkedFolders(dir) {
		dirs = append(dirs, l.target)
	}
	i, err := withinAny(path, dirs)
	return err != nil || i >= 0
}
