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
	var roots []string // of the dumps: their links are looked at too
	for _, d := range g.dumps {
		trees, err := outsideDump(files, d)
		if err != nil {
			return err
		}
		for _, t := range trees {
			if t.via.path == "" {
				roots = append(roots, t.dir)
			}
		}
	}
	return g.notInputs(files, roots)
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

// outsideDump refuses outputs inside the dump that dump belongs to, or
// inside a folder one of its folders leads to as a symbolic link; not
// knowing is refusing.
func outsideDump(outs []Output, dump string) ([]dumpTree, error) {
	trees, err := dumpTrees(dump)
	if err != nil {
		return nil, fmt.Errorf("refusing to write %s: %w %s: %w", outs[0].Path, ErrUndecided, dump, err)
	}
	dirs := make([]folder, len(trees))
	for i, t := range trees {
		dirs[i] = t.folder
	}
	for _, o := range outs {
		i, err := withinAny(o.Path, dirs)
		if err != nil {
			return nil, fmt.Errorf("refusing to write %s: %w %s: %w", o.Path, ErrUndecided, trees[0].shown, err)
		}
		if i >= 0 {
			return nil, fmt.Errorf("refusing to write %s: %w %s%s", o.Path, ErrInsideDump, trees[i].shown, trees[i].through())
		}
	}
	return trees, nil
}

// notInputs refuses an existing output that is one of the inputs, or
// that a file of a dump (under one of roots) leads to as a symbolic link.
// Only outputs that exist can be either, so without one nothing is walked.
func (g *Guard) notInputs(outs []Output, roots []string) error {
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
	// an output with a single name is an input only by that name, or as
	// the file a symbolic link among the inputs leads to: every input of
	// the dump and of the monitor is looked at only when an output has
	// other names or lies inside such a folder, and otherwise only the
	// files that are symbolic links, in the whole of each dump
	all := func(dir string) bool {
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
		if all(d) && !eachDumpFile(d, every(check)) {
			return refused
		}
	}
	for _, r := range roots {
		if !eachDumpFile(r, linksOnly(check)) {
			return refused
		}
	}
	for _, t := range g.trees {
		fn := linksOnly(check)
		if all(t) {
			fn = every(check)
		}
		if !eachFile(t, fn) {
			return refused
		}
	}
	return nil
}

// every is check for every file a walk meets.
func every(check func(string) bool) func(string, bool) bool {
	return func(path string, _ bool) bool { return check(path) }
}

// linksOnly is check for the files a walk meets that are symbolic links;
// the others pass.
func linksOnly(check func(string) bool) func(string, bool) bool {
	return func(path string, link bool) bool { return !link || check(path) }
}

// eachFile calls fn with every file under dir, and whether it is a
// symbolic link, until fn returns false.
func eachFile(dir string, fn func(path string, link bool) bool) bool {
	ok := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if !fn(p, d.Type()&fs.ModeSymlink != 0) {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok
}
