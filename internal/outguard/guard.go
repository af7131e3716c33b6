package outguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Guard collects what a command reads, to check where it writes. The zero
// value reads nothing.
type Guard struct {
	files []string // input files, as the user named them
	trees []string // folders every file of which is an input
	dumps []string // msprobe dump paths
}

// Output is a path a command will write (a file, or a folder it fills),
// with the flag that named it for the messages.
type Output struct {
	Flag string
	Path string
}

// Input adds files the command reads; "" is ignored.
func (g *Guard) Input(paths ...string) {
	for _, p := range paths {
		if p != "" {
			g.files = append(g.files, p)
		}
	}
}

// InputTree adds a folder whose files the command reads (monitor output);
// "" is ignored.
func (g *Guard) InputTree(dir string) {
	if dir != "" {
		g.trees = append(g.trees, dir)
	}
}

// Dump adds an msprobe dump path (a dump_path, step folder, rank folder or
// dump.json); "" is ignored. Its dump.json, stack.json and construct.json
// files are inputs, and nothing may be written inside the dump it belongs
// to (see DumpRoot).
func (g *Guard) Dump(path string) {
	if path != "" {
		g.dumps = append(g.dumps, path)
	}
}

// Check refuses outputs that name the same file as each other, that lie
// inside a dump, or that are the same file as an input. An output of ""
// or "-" is standard output and is not checked.
func (g *Guard) Check(outs ...Output) error {
	var files []Output
	for _, o := range outs {
		if o.Path != "" && o.Path != "-" {
			files = append(files, o)
		}
	}
	if len(files) == 0 {
		return nil
	}
	if err := distinct(files); err != nil {
		return err
	}
	for _, d := range g.dumps {
		if err := outsideDump(files, d); err != nil {
			return err
		}
	}
	return g.notInputs(files)
}

// distinct refuses two outputs that are one file, by name or by identity.
func distinct(outs []Output) error {
	names := make([]string, len(outs))
	infos := make([]fs.FileInfo, len(outs))
	for i, o := range outs {
		r, err := resolve(o.Path)
		if err != nil {
			return fmt.Errorf("refusing to write %s: %w", o.Path, err)
		}
		names[i] = r
		infos[i], _ = os.Stat(o.Path)
		for j := range i {
			if names[j] == r || (infos[j] != nil && infos[i] != nil && os.SameFile(infos[j], infos[i])) {
				return fmt.Errorf("refusing to write %s: %s and %s %w", o.Path, outs[j].Flag, o.Flag, ErrSameOutput)
			}
		}
	}
	return nil
}

// outsideDump refuses outputs inside the dump that dump belongs to; not
// knowing is refusing.
func outsideDump(outs []Output, dump string) error {
	root, err := DumpRoot(dump)
	if err != nil {
		return fmt.Errorf("refusing to write %s: %w %s: %w", outs[0].Path, ErrUndecided, dump, err)
	}
	shown := root
	if r, err := resolve(dump); err == nil && r == root {
		shown = dump
	}
	for _, o := range outs {
		inside, err := Within(o.Path, root)
		if err != nil {
			return fmt.Errorf("refusing to write %s: %w %s: %w", o.Path, ErrUndecided, shown, err)
		}
		if inside {
			return fmt.Errorf("refusing to write %s: %w %s", o.Path, ErrInsideDump, shown)
		}
	}
	return nil
}

// notInputs refuses an existing output that is one of the inputs. Only
// outputs that exist can be an input, so without one nothing is walked.
func (g *Guard) notInputs(outs []Output) error {
	type existing struct {
		out  Output
		info fs.FileInfo
	}
	var ex []existing
	for _, o := range outs {
		info, err := os.Stat(o.Path)
		switch {
		case err == nil:
			ex = append(ex, existing{o, info})
		case !absent(err):
			return fmt.Errorf("refusing to write %s: %w", o.Path, err)
		}
	}
	if len(ex) == 0 {
		return nil
	}
	// an output with a single name is an input only by that name, or
	// through a symbolic link, which resolves inside the folder it names:
	// the dump's and the monitor's files are walked only when an output
	// has other names, or lies inside such a folder
	walk := func(dir string) bool {
		for _, e := range ex {
			if in, err := Within(e.out.Path, dir); mayHaveOtherNames(e.info) || in || err != nil {
				return true
			}
		}
		return false
	}
	var refused error
	check := func(input string) bool {
		info, err := os.Stat(input)
		if err != nil {
			return true // an input that cannot be looked at cannot be read either
		}
		for _, e := range ex {
			if os.SameFile(info, e.info) {
				refused = fmt.Errorf("refusing to write %s: %w %s", e.out.Path, ErrSameFile, input)
				return false
			}
		}
		return true
	}
	for _, f := range g.files {
		if !check(f) {
			return refused
		}
	}
	for _, d := range g.dumps {
		if walk(d) && !eachDumpFile(d, check) {
			return refused
		}
	}
	for _, t := range g.trees {
		if walk(t) && !eachFile(t, check) {
			return refused
		}
	}
	return nil
}

// dumpFiles are the files of a rank folder the dump readers open.
var dumpFiles = map[string]bool{"dump.json": true, "stack.json": true, "construct.json": true}

// maxDumpDepth is how deep the rank folders of a dump lie below the path
// given: graph/stepN/rankM.
const maxDumpDepth = 3

// eachDumpFile calls fn with every dump.json, stack.json and construct.json
// of the dump at path (a dump.json and its neighbours, or the rank folders
// below a folder), looking only at names and never into the tensor data,
// until fn returns false.
func eachDumpFile(path string, fn func(string) bool) bool {
	info, err := os.Stat(path)
	if err != nil {
		return true
	}
	if !info.IsDir() {
		if !fn(path) {
			return false
		}
		dir := filepath.Dir(path)
		return fn(filepath.Join(dir, "stack.json")) && fn(filepath.Join(dir, "construct.json"))
	}
	ok := true
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		depth := depthBelow(path, p)
		if d.IsDir() {
			if depth > maxDumpDepth || d.Name() == "dump_tensor_data" {
				return filepath.SkipDir
			}
			return nil
		}
		if dumpFiles[d.Name()] && !fn(p) {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok
}

// eachFile calls fn with every file under dir until fn returns false.
func eachFile(dir string, fn func(string) bool) bool {
	ok := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if !fn(p) {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok
}

// depthBelow is how many folders below root p lies (0 for root itself).
func depthBelow(root, p string) int {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return 0
	}
	n := 1
	for _, c := range rel {
		if c == filepath.Separator {
			n++
		}
	}
	return n
}
