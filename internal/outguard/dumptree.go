package outguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// dumpFiles are the files of a rank folder the dump readers open.
var dumpFiles = map[string]bool{"dump.json": true, "stack.json": true, "construct.json": true}

// maxDumpDepth is how deep the rank folders of a dump lie below the path
// given: graph/stepN/rankM.
const maxDumpDepth = 3

// tensorFolder is where msprobe writes a rank's tensors, which the guard
// does not look into.
const tensorFolder = "dump_tensor_data"

// folderLink is a folder of a dump that is a symbolic link, and the
// folder it leads to.
type folderLink struct {
	path   string
	target folder
}

// readFolder reports whether the dump readers read a folder of this name
// (a mode, step or rank folder), and so follow it when it is a link.
func readFolder(name string) bool {
	return modeName(name) || stepName(name) || rankName(name)
}

// followFolder returns the folder the symbolic link at path leads to, or
// false when it leads to no folder (then nothing is read through it).
func followFolder(path string) (folder, bool) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return folder{}, false
	}
	if target, err = filepath.Abs(target); err != nil {
		return folder{}, false
	}
	info, err := os.Stat(target)
	return folder{target, info}, err == nil && info.IsDir()
}

// linkedFolders lists the mode, step and rank folders below root that are
// symbolic links to folders: through them the dump lies outside root too.
// Rank folders are not looked into, so a dump_path costs one listing per
// step folder.
func linkedFolders(root string) []folderLink {
	var out []folderLink
	seen := map[string]bool{}
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			name := e.Name()
			if !readFolder(name) || !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			p := filepath.Join(dir, name)
			if e.Type()&fs.ModeSymlink != 0 {
				target, ok := followFolder(p)
				if !ok || seen[target.dir] {
					continue
				}
				seen[target.dir] = true
				out = append(out, folderLink{p, target})
			}
			if depth+1 < maxDumpDepth && !rankName(name) {
				visit(p, depth+1)
			}
		}
	}
	visit(root, 0)
	return out
}

// eachDumpFile calls fn with every dump.json, stack.json and construct.json
// of the dump at path (a dump.json and its neighbours, or the rank folders
// below a folder), and whether the file is a symbolic link, until fn
// returns false. It follows the mode, step and rank folders that are links,
// as the readers do (each folder they lead to once), looks only at names,
// and never into the tensor data.
func eachDumpFile(path string, fn func(file string, link bool) bool) bool {
	info, err := os.Stat(path)
	if err != nil {
		return true
	}
	if !info.IsDir() {
		dir := filepath.Dir(path)
		for _, f := range []string{path, filepath.Join(dir, "stack.json"), filepath.Join(dir, "construct.json")} {
			li, err := os.Lstat(f)
			if err == nil && !fn(f, li.Mode()&fs.ModeSymlink != 0) {
				return false
			}
		}
		return true
	}
	w := dumpWalk{fn: fn, seen: map[string]bool{}}
	if r, err := resolve(path); err == nil {
		w.seen[r] = true
	}
	return w.folder(path, 0)
}

// dumpWalk is one walk of eachDumpFile.
type dumpWalk struct {
	fn   func(file string, link bool) bool
	seen map[string]bool // the folders reached through links, resolved
}

// folder walks dir, depth folders below the path given.
func (w *dumpWalk) folder(dir string, depth int) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range ents {
		name, p := e.Name(), filepath.Join(dir, e.Name())
		link := e.Type()&fs.ModeSymlink != 0
		switch {
		case dumpFiles[name] && !e.IsDir():
			if !w.fn(p, link) {
				return false
			}
		case depth >= maxDumpDepth || name == tensorFolder:
		case e.IsDir():
			if !w.folder(p, depth+1) {
				return false
			}
		case link && readFolder(name):
			if target, ok := followFolder(p); ok && !w.seen[target.dir] {
				w.seen[target.dir] = true
				if !w.folder(p, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

// dumpTree is a folder no output may lie in, and how a refusal names it.
type dumpTree struct {
	folder
	shown string     // the dump, as a refusal names it
	via   folderLink // the link that leads to it; path "" for a root
}

// through says which link leads to the tree, for a refusal.
func (t dumpTree) through() string {
	if t.via.path == "" {
		return ""
	}
	return fmt.Sprintf(" (%s is a link to %s)", t.via.path, t.via.target.dir)
}

// dumpTrees lists the folders of the dump that path belongs to: its root
// (DumpRoot), the root found from path as it is named when a link on the
// way leads elsewhere, and every folder one of their mode, step and rank
// folders leads to as a symbolic link.
func dumpTrees(path string) ([]dumpTree, error) {
	root, err := DumpRoot(path)
	if err != nil {
		return nil, err
	}
	named, err := namedRoot(path)
	if err != nil {
		return nil, err
	}
	shown := root
	if r, err := resolve(path); err == nil && r == root {
		shown = path
	}
	var trees []dumpTree
	seen := map[string]bool{}
	for _, r := range []struct{ dir, shown string }{{root, shown}, {named, named}} {
		f, err := folderOf(r.dir)
		if err != nil {
			return nil, err
		}
		if !seen[f.dir] {
			seen[f.dir] = true
			trees = append(trees, dumpTree{folder: f, shown: r.shown})
		}
	}
	for _, t := range slices.Clone(trees) {
		for _, l := range linkedFolders(t.dir) {
			if !seen[l.target.dir] {
				seen[l.target.dir] = true
				trees = append(trees, dumpTree{folder: l.target, shown: t.shown, via: l})
			}
		}
	}
	return trees, nil
}
