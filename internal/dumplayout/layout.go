package dumplayout

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/notation"
)

// RankDir is one rank's dump of one step: dump_path/stepN/rankM.
type RankDir struct {
	Mode      string // "" or the MindSpore/pynative level it was found under ("graph", "pynative")
	Step      int
	Rank      int
	Dir       string
	Dump      string // path of dump.json; "" when absent
	Stack     string // path of stack.json; "" when absent
	Construct string // path of construct.json; "" when absent
	// NoDump: the folder held no dump.json when it was found (a rank
	// folder made before a crash, or one msprobe had not written yet)
	NoDump bool
}

// Layout is every rank folder found under a path, sorted by mode, step and
// rank, with what is odd about the tree.
type Layout struct {
	Root string
	Dirs []RankDir
	// EmptySteps are step folders the dump has whose rank folders cannot
	// be listed or that hold none: the step was dumped, and none of its
	// ranks can be read.
	EmptySteps []EmptyStep
	Warnings   []string // Notes, in order, then Gaps(Dirs)
	Notes      []Note   // what is odd about the folders, one note per folder
	// Links are the folders read through a symbolic link (the path given,
	// a mode, step or rank folder), in the order of their paths.
	Links []Link
}

// EmptyStep is a step folder that holds no rank folder that can be read.
type EmptyStep struct {
	Mode string
	Step int
	Dir  string
	// Unreadable: the folder could not be listed (a link that leads
	// nowhere, permission denied); else it holds no rank folder.
	Unreadable bool
}

// SelectEmpty returns the empty steps of the given steps (nil: all).
func (l *Layout) SelectEmpty(steps map[int]bool) []EmptyStep {
	var out []EmptyStep
	for _, e := range l.EmptySteps {
		if steps == nil || steps[e.Step] {
			out = append(out, e)
		}
	}
	return out
}

// Note is a warning about one folder of the tree.
type Note struct {
	Dir  string // the folder it is about
	Text string // the warning, Dir included
}

// Steps lists the step numbers present, ascending.
func (l *Layout) Steps() []int {
	var out []int
	for _, d := range l.Dirs {
		if len(out) == 0 || out[len(out)-1] != d.Step {
			out = append(out, d.Step)
		}
	}
	sort.Ints(out)
	return uniqInts(out)
}

// Select returns the rank folders of the given steps and ranks (nil: all),
// in the layout's order. With neither it returns Dirs itself, not a copy.
func (l *Layout) Select(steps, ranks map[int]bool) []RankDir {
	if steps == nil && ranks == nil {
		return l.Dirs
	}
	var out []RankDir
	for _, d := range l.Dirs {
		if (steps == nil || steps[d.Step]) && (ranks == nil || ranks[d.Rank]) {
			out = append(out, d)
		}
	}
	return out
}

// Modes lists the execution modes present ("" for an ordinary dump).
func (l *Layout) Modes() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range l.Dirs {
		if !seen[d.Mode] {
			seen[d.Mode] = true
			out = append(out, d.Mode)
		}
	}
	sort.Strings(out)
	return out
}

// Discover finds the rank folders under path, which may be a dump_path
// (stepN/ folders), a step folder (rankN/ folders), a rank folder (holding
// dump.json), a dump.json file, or a folder with MindSpore's graph/ and
// pynative/ levels above any of these.
func Discover(path string) (*Layout, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open dump: %w", err)
	}
	l := &Layout{Root: path}
	if info.IsDir() {
		l.rootLink(path)
	}
	if !info.IsDir() {
		if filepath.Base(path) != "dump.json" {
			return nil, fmt.Errorf("%s: not a folder and not a dump.json", path)
		}
		dir := filepath.Dir(path)
		l.addRank("", stepOfPath(dir), rankOfPath(dir), dir)
		return l, nil
	}
	if err := l.discover(path, "", 0); err != nil {
		return nil, err
	}
	if len(l.Dirs) == 0 {
		return nil, fmt.Errorf("%s: %w (expected stepN/ folders, rankN/ folders or a dump.json)", path, ErrNoDump)
	}
	sort.SliceStable(l.Dirs, func(i, j int) bool {
		a, b := l.Dirs[i], l.Dirs[j]
		if a.Mode != b.Mode {
			return a.Mode < b.Mode
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Rank < b.Rank
	})
	l.Warnings = append(SortNotes(l.Notes, func(d string) string { return relKey(l.Root, d) }), Gaps(l.Dirs)...)
	sort.SliceStable(l.Links, func(i, j int) bool { return relKey(l.Root, l.Links[i].Path) < relKey(l.Root, l.Links[j].Path) })
	return l, nil
}

func (l *Layout) discover(dir, mode string, depth int) error {
	if fileExists(filepath.Join(dir, "dump.json")) {
		l.addRank(mode, stepOfPath(dir), rankOfPath(dir), dir)
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	var steps, ranks, modes []fs.DirEntry
	var odd []string
	links := map[string]Link{} // the step and mode folders that are links
	for _, e := range ents {
		name := e.Name()
		switch {
		case looksNumbered(name, "step") || looksNumbered(name, "rank"):
			if IsFolder(dir, e) {
				odd = append(odd, name)
			}
		case rankFolderName(name):
			// addStep reads them again, and names their links
			if IsFolder(dir, e) || e.Type()&fs.ModeSymlink != 0 {
				ranks = append(ranks, e)
			}
		case isNumbered(name, "step") || (name == "graph" || name == "pynative") && depth == 0:
			f, link := l.follow(dir, e)
			if n, ok := Numbered(name, "step"); ok && f == brokenLink {
				l.EmptySteps = append(l.EmptySteps, EmptyStep{Mode: mode, Step: n, Dir: filepath.Join(dir, name), Unreadable: true})
			}
			if f != folder {
				continue
			}
			links[name] = link
			if isNumbered(name, "step") {
				steps = append(steps, e)
			} else {
				modes = append(modes, e)
			}
		}
	}
	if len(odd) > 0 {
		l.note(dir, "%s: ignored %s (msprobe names its folders stepN and rankN, N a number of at most nine digits, without sign or leading zero)", dir, strings.Join(odd, ", "))
	}
	switch {
	case len(modes) > 0 && len(steps) == 0 && len(ranks) == 0:
		for _, m := range modes {
			l.used(links[m.Name()])
			if err := l.discover(filepath.Join(dir, m.Name()), m.Name(), depth+1); err != nil {
				return err
			}
		}
	case len(steps) > 0:
		for _, s := range steps {
			n, _ := strconv.Atoi(strings.TrimPrefix(s.Name(), "step"))
			l.used(links[s.Name()])
			l.addStep(mode, n, filepath.Join(dir, s.Name()))
		}
	case len(ranks) > 0:
		l.addStep(mode, stepOfPath(dir), dir)
	}
	return nil
}

// addStep adds the rank folders of one step folder. msprobe names a rank
// folder rankN, "rank" when torch.distributed was not initialised (8.x), or
// procPID (26.x); a procPID folder is read only when it is the only one.
func (l *Layout) addStep(mode string, step int, dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		l.note(dir, "%s: %v", dir, err)
		l.EmptySteps = append(l.EmptySteps, EmptyStep{Mode: mode, Step: step, Dir: dir, Unreadable: true})
		return
	}
	var ranks, procs, odd []string
	links := map[string]Link{}  // the rank folders that are links
	broken := map[string]bool{} // and those that lead to no folder
	for _, e := range ents {
		name := e.Name()
		if looksNumbered(name, "rank") {
			if IsFolder(dir, e) {
				odd = append(odd, name)
			}
			continue
		}
		if !rankFolderName(name) {
			continue
		}
		f, link := l.follow(dir, e)
		if f == notFolder {
			continue
		}
		if link.Path != "" {
			links[name] = link
		}
		if f == brokenLink {
			broken[name] = true
		}
		if isNumbered(name, "proc") {
			procs = append(procs, name)
		} else {
			ranks = append(ranks, name)
		}
	}
	if len(odd) > 0 {
		l.note(dir, "%s: ignored %s (msprobe names its rank folders rankN, N a number of at most nine digits, without sign or leading zero)", dir, strings.Join(odd, ", "))
	}
	if len(ranks) == 0 && len(procs) == 1 {
		ranks = procs
	} else if len(procs) > 0 {
		l.note(dir, "%s: ignored %s (process folders of non-distributed helpers, next to rank folders)", dir, strings.Join(procs, ", "))
	}
	if len(ranks) == 0 {
		l.note(dir, "%s: step folder without rank folders", dir)
		l.EmptySteps = append(l.EmptySteps, EmptyStep{Mode: mode, Step: step, Dir: dir})
		return
	}
	seen := map[int]string{}
	var noDump []int
	for _, name := range ranks {
		r := rankOfName(name)
		if prev, ok := seen[r]; ok {
			l.note(dir, "%s: %s and %s both read as rank %d; using %s", dir, prev, name, r, prev)
			continue
		}
		seen[r] = name
		// a rank folder without dump.json, or a link that leads nowhere, is
		// kept: its rank was dumped but cannot be read, and may hold the
		// origin
		rd := filepath.Join(dir, name)
		l.used(links[name])
		if !broken[name] && absent(filepath.Join(rd, "dump.json")) {
			// nothing to read: its number and folder only
			l.Dirs = append(l.Dirs, RankDir{Mode: mode, Step: step, Rank: r, Dir: rd, NoDump: true})
			noDump = append(noDump, r)
			continue
		}
		l.addRank(mode, step, r, rd)
	}
	if len(noDump) > 0 {
		// one note a step: a hundred thousand empty folders are one line
		l.note(dir, "%s: %s %s no dump.json", dir, plural(len(noDump), "rank", "ranks")+" "+notation.FormatRanges(noDump), plural(len(noDump), "has", "have"))
	}
}

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// addRank adds a rank folder. Its four paths share one string: a run of a
// thousand ranks and a hundred steps has 100,000 rank folders, and their
// paths are most of what a trace keeps.
func (l *Layout) addRank(mode string, step, rank int, dir string) {
	dir = filepath.Clean(dir)
	base := dir
	if !strings.HasSuffix(base, string(filepath.Separator)) { // "/" stays "/"
		base += string(filepath.Separator)
	}
	dump, stack := base+"dump.json", base+"stack.json"
	all := dump + stack + base + "construct.json"
	a, b := len(dump), len(dump)+len(stack)
	d := RankDir{Mode: mode, Step: step, Rank: rank, Dir: all[:len(dir)], Dump: all[:a]}
	if p := all[a:b]; fileExists(p) {
		d.Stack = p
	}
	if p := all[b:]; fileExists(p) {
		d.Construct = p
	}
	l.Dirs = append(l.Dirs, d)
}

// Gaps reports step numbers missing between the first and the last, and
// ranks present in some steps but missing from others.
func Gaps(dirs []RankDir) []string {
	var out []string
	warnf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	modes := map[string]bool{}
	for _, d := range dirs {
		modes[d.Mode] = true
	}
	for _, mode := range slices.Sorted(maps.Keys(modes)) {
		byStep := map[int][]int{}
		maxRank := -1
		for _, d := range dirs {
			if d.Mode == mode {
				byStep[d.Step] = append(byStep[d.Step], d.Rank)
				maxRank = max(maxRank, d.Rank)
			}
		}
		where := ""
		if mode != "" {
			where = mode + ": "
		}
		steps := slices.Sorted(maps.Keys(byStep))
		if missing := notation.MissingRanges(steps, steps[0], steps[len(steps)-1]); missing != "" {
			warnf("%ssteps %s not dumped (between step %d and step %d)", where, missing, steps[0], steps[len(steps)-1])
		}
		for _, s := range steps {
			ranks := slices.Sorted(slices.Values(byStep[s]))
			if gone := notation.MissingRanges(ranks, 0, maxRank); gone != "" {
				warnf("%sstep %d: ranks %s not dumped", where, s, gone)
			}
		}
	}
	return out
}

// SortNotes orders notes by the folder they are about, as key places it
// (its path under the dump root), and returns their texts.
func SortNotes(notes []Note, key func(dir string) string) []string {
	ns := slices.Clone(notes)
	sort.SliceStable(ns, func(i, j int) bool { return key(ns[i].Dir) < key(ns[j].Dir) })
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.Text)
	}
	return out
}

// relKey is dir's path under root, for ordering.
func relKey(root, dir string) string {
	if r, err := filepath.Rel(root, dir); err == nil {
		return filepath.ToSlash(r)
	}
	return dir
}

func (l *Layout) note(dir, format string, args ...any) {
	l.Notes = append(l.Notes, Note{Dir: dir, Text: fmt.Sprintf(format, args...)})
}

// isNumbered reports whether name is prefix followed by a number as
// msprobe writes it: decimal digits, no sign, no leading zero.
func isNumbered(name, prefix string) bool {
	_, ok := Numbered(name, prefix)
	return ok
}

// Numbered reads a folder name msprobe writes, "step12" or "rank3" (prefix
// and a number without sign or leading zero, at most MaxFolderNumber), as
// its number. A longer number is no folder msprobe writes: a name past
// int64 would otherwise wrap, or stand for a billion missing steps.
func Numbered(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') || len(rest) > maxFolderDigits {
		return 0, false
	}
	return atoi(rest)
}

// MaxFolderNumber is the largest step or rank number of a folder name:
// nine digits (a billion steps; no job has that many ranks).
const MaxFolderNumber = 999_999_999

const maxFolderDigits = 9

// looksNumbered reports a folder meant as a numbered one that msprobe
// would not have written: "step05", "step-1", "stepabc", ".step5".
func looksNumbered(name, prefix string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(name, "."), prefix)
	return ok && rest != "" && !isNumbered(name, prefix)
}

func rankOfName(name string) int {
	if rest, ok := strings.CutPrefix(name, "rank"); ok {
		if n, ok := atoi(rest); ok {
			return n
		}
	}
	return 0
}

func rankOfPath(dir string) int { return rankOfName(filepath.Base(dir)) }

// stepOfPath reads the step number from a rank folder's parent (stepN) or
// from the folder itself; 0 when neither says.
func stepOfPath(dir string) int {
	base := filepath.Base(dir)
	if base == "rank" || isNumbered(base, "rank") || isNumbered(base, "proc") {
		base = filepath.Base(filepath.Dir(dir))
	}
	if isNumbered(base, "step") {
		n, _ := atoi(strings.TrimPrefix(base, "step"))
		return n
	}
	return 0
}

// absent reports whether nothing is at p (a folder, a device or a file
// that cannot be read is something, and says so when it is read).
func absent(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, fs.ErrNotExist)
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}

func uniqInts(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// ErrNoDump is returned by Discover when nothing under the path looks like
// an msprobe dump.
var ErrNoDump = errors.New("no msprobe dump found")
