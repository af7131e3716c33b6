package dump

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Inside reports whether path lies within dir (or is dir): nanhunt never
// writes inside a dump. A dir that is a file (a dump.json) stands for its
// folder. Symbolic links are resolved as far as the paths exist. It fails
// closed: when either path cannot be resolved (a link loop, a folder that
// cannot be searched), where it leads is unknown and Inside reports true.
func Inside(path, dir string) bool {
	if dir == "" {
		return false
	}
	p, err1 := resolve(path)
	d, err2 := resolve(dir)
	if err1 != nil || err2 != nil {
		return true
	}
	info, err := os.Stat(d)
	switch {
	case err == nil && !info.IsDir():
		d = filepath.Dir(d)
	case err != nil && !absent(err):
		return true
	}
	if filepath.VolumeName(p) != filepath.VolumeName(d) {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err != nil || rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// resolve makes a path absolute and resolves the symbolic links of its
// longest existing prefix. It fails when a part that exists cannot be
// followed.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !absent(err) {
			return "", err
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// absent reports whether err says a path does not exist.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
