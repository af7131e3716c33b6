package outguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DumpRoot returns the folder of the msprobe dump that path belongs to
// (resolved, absolute). path may be a dump_path, a step folder, a rank
// folder or a dump.json, as nanhunt's commands take them: a rank folder
// (named rank, rankN or procN, or holding dump.json) climbs to its step
// folder, a step folder (stepN) to the dump_path, and a MindSpore graph/ or
// pynative/ level reached from below to the folder holding it. A folder
// that holds stepN folders is a dump_path itself, whatever its name. A
// path that does not exist, and a file other than a dump.json, is its own
// root.
func DumpRoot(path string) (string, error) {
	p, err := resolve(path)
	if err != nil {
		return "", err
	}
	return climb(p, filepath.Base(path) == "dump.json")
}

// namedRoot is the root DumpRoot finds from path as it is named, without
// resolving its symbolic links: for dump/step3/rank0 where step3 is a link
// to /disk2/step3, dump (where DumpRoot finds /disk2).
func namedRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	return climb(abs, false)
}

// climb finds the root of the dump the absolute path p belongs to, as
// DumpRoot says; dumpJSON tells that p is a dump.json by another name.
func climb(p string, dumpJSON bool) (string, error) {
	info, err := os.Stat(p)
	switch {
	case err != nil && absent(err):
		return p, nil
	case err != nil:
		return "", fmt.Errorf("stat %s: %w", p, err)
	}
	d := p
	if !info.IsDir() {
		if !dumpJSON && filepath.Base(p) != "dump.json" {
			return p, nil
		}
		d = filepath.Dir(p)
	}
	climbed := false
	if rankName(filepath.Base(d)) || holdsFile(d, "dump.json") {
		if up := filepath.Dir(d); !holdsSteps(d) && (rankName(filepath.Base(d)) || stepName(filepath.Base(up))) {
			d, climbed = up, true
		}
	}
	if stepName(filepath.Base(d)) && !holdsSteps(d) {
		d, climbed = filepath.Dir(d), true
	}
	if climbed && modeName(filepath.Base(d)) {
		d = filepath.Dir(d)
	}
	return d, nil
}

// numbered reports whether name is prefix followed by a decimal number.
func numbered(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 31)
	return err == nil
}

func rankName(name string) bool {
	return name == "rank" || numbered(name, "rank") || numbered(name, "proc")
}

func stepName(name string) bool { return numbered(name, "step") }

func modeName(name string) bool { return name == "graph" || name == "pynative" }

func holdsFile(dir, name string) bool {
	info, err := os.Stat(filepath.Join(dir, name))
	return err == nil && !info.IsDir()
}

// holdsSteps reports whether dir holds stepN folders, or links to folders
// by such names (it is a dump_path). A folder that cannot be listed holds
// none: the root then lies higher, and more is refused, not less.
func holdsSteps(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !stepName(e.Name()) {
			continue
		}
		if e.IsDir() {
			return true
		}
		if _, ok := followFolder(filepath.Join(dir, e.Name())); ok && e.Type()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}
