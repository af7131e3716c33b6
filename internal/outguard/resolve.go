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
	p, err := resolve(path)
	if err != nil {
		return false, err
	}
	d, err := resolve(dir)
	if err != nil {
		return false, err
	}
	di, err := os.Stat(d)
	switch {
	case err == nil && !di.IsDir():
		return p == d, nil
	case err != nil && !absent(err):
		return false, fmt.Errorf("stat %s: %w", d, err)
	}
	if filepath.VolumeName(p) != filepath.VolumeName(d) {
		return false, nil
	}
	rel, err := filepath.Rel(d, p)
	if err != nil {
		return false, fmt.Errorf("compare %s with %s: %w", path, dir, err)
	}
	if rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return true, nil
	}
	if di == nil {
		return false, nil // dir does not exist: nothing can be inside it
	}
	for a := p; ; a = filepath.Dir(a) {
		ai, err := os.Stat(a)
		switch {
		case err == nil && os.SameFile(ai, di):
			return true, nil
		case err != nil && !absent(err):
			return false, fmt.Errorf("stat %s: %w", a, err)
		}
		if filepath.Dir(a) == a {
			return false, nil
		}
	}
}

// Inside reports whether path lies within the dump at dumpPath (a folder,
// or a dump.json, which stands for its folder), failing closed: when
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
	in, err := Within(path, dir)
	return err != nil || in
}
