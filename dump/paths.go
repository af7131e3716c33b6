package dump

import (
	"os"
	"path/filepath"
	"strings"
)

// Inside reports whether path lies within dir (or is dir): nanhunt never
// writes inside a dump. A dir that is a file (a dump.json) stands for its
// folder. Symbolic links are resolved as far as the paths exist.
func Inside(path, dir string) bool {
	if dir == "" {
		return false
	}
	p, err1 := resolve(path)
	d, err2 := resolve(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	if info, err := os.Stat(d); err == nil && !info.IsDir() {
		d = filepath.Dir(d)
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve makes a path absolute and resolves the symbolic links of its
// longest existing prefix.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}
