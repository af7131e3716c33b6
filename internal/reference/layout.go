package reference

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// rankDir is one rank folder of one step.
type rankDir struct {
	rank int
	dir  string
	dump string // the dump.json path
}

// stepDir is one step folder; unreadable when it cannot be listed (a link
// that leads to no folder, no permission).
type stepDir struct {
	step       int
	ranks      []rankDir
	unreadable bool
}

// numbered reads "<prefix><digits>".
func numbered(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || !isDigits(rest) {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

func subdirs(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if fi, err := os.Stat(filepath.Join(dir, de.Name())); err == nil && fi.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out
}

// badLinks are the names in dir that are symbolic links leading to no
// folder (nowhere, round a loop, or to a file).
func badLinks(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if de.Type()&os.ModeSymlink == 0 {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, de.Name())); err != nil || !fi.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out
}

// rankDirs finds the rank folders of a step folder: rank<digits>, a folder
// named "rank" (rank 0), and a lone proc<digits> when there is no rank
// folder (rank 0).
func rankDirs(stepPath string) []rankDir {
	var out []rankDir
	var procs []string
	seen := map[int]bool{}
	// a rank folder that is a link leading to no folder was dumped and
	// cannot be read
	for _, name := range append(subdirs(stepPath), badLinks(stepPath)...) {
		rank, ok := numbered(name, "rank")
		if name == "rank" {
			rank, ok = 0, true
		}
		if _, isProc := numbered(name, "proc"); isProc {
			procs = append(procs, name)
		}
		if ok && !seen[rank] {
			seen[rank] = true
			d := filepath.Join(stepPath, name)
			out = append(out, rankDir{rank: rank, dir: d, dump: filepath.Join(d, "dump.json")})
		}
	}
	if len(out) == 0 && len(procs) == 1 {
		d := filepath.Join(stepPath, procs[0])
		out = append(out, rankDir{rank: 0, dir: d, dump: filepath.Join(d, "dump.json")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	return out
}

// rankOfFolder is the rank a lone rank folder stands for.
func rankOfFolder(name string) int {
	if r, ok := numbered(name, "rank"); ok {
		return r
	}
	return 0
}

// discover finds the steps and ranks under path: a dump_path with
// step<digits> folders, one step folder with rank folders, one rank folder,
// or a dump.json file.
func discover(path string) ([]stepDir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	if !fi.IsDir() {
		dir := filepath.Dir(path)
		return []stepDir{{step: stepOfFolder(filepath.Dir(dir)), ranks: []rankDir{{rank: rankOfFolder(filepath.Base(dir)), dir: dir, dump: path}}}}, nil
	}
	var steps []stepDir
	for _, name := range subdirs(path) {
		if n, ok := numbered(name, "step"); ok {
			dir := filepath.Join(path, name)
			_, err := os.ReadDir(dir)
			steps = append(steps, stepDir{step: n, ranks: rankDirs(dir), unreadable: err != nil})
		}
	}
	for _, name := range badLinks(path) {
		if n, ok := numbered(name, "step"); ok {
			steps = append(steps, stepDir{step: n, unreadable: true}) // README 9: dumped, and none of it read
		}
	}
	if len(steps) > 0 {
		sort.Slice(steps, func(i, j int) bool { return steps[i].step < steps[j].step })
		return steps, nil
	}
	if ranks := rankDirs(path); len(ranks) > 0 {
		return []stepDir{{step: stepOfFolder(path), ranks: ranks}}, nil
	}
	if _, err := os.Stat(filepath.Join(path, "dump.json")); err == nil {
		return []stepDir{{step: stepOfFolder(filepath.Dir(path)), ranks: []rankDir{{rank: rankOfFolder(filepath.Base(path)), dir: path, dump: filepath.Join(path, "dump.json")}}}}, nil
	}
	return nil, fmt.Errorf("reference: %s: no step, rank folder or dump.json found", path)
}

// stepOfFolder is the step a folder named step<digits> stands for, else 0.
func stepOfFolder(dir string) int {
	if n, ok := numbered(filepath.Base(dir), "step"); ok {
		return n
	}
	return 0
}

// selectDirs keeps the requested steps and ranks. A step left without a
// rank folder is kept: it was dumped (README 9), and the ranks expected
// there are unread.
func selectDirs(steps []stepDir, opt Options) []stepDir {
	var out []stepDir
	for _, s := range steps {
		if opt.Steps != nil && !opt.Steps[s.step] {
			continue
		}
		var ranks []rankDir
		for _, r := range s.ranks {
			if opt.Ranks == nil || opt.Ranks[r.rank] {
				ranks = append(ranks, r)
			}
		}
		out = append(out, stepDir{step: s.step, ranks: ranks, unreadable: s.unreadable})
	}
	return out
}

// anyRank reports whether some step has a rank folder.
func anyRank(steps []stepDir) bool {
	for _, s := range steps {
		if len(s.ranks) > 0 {
			return true
		}
	}
	return false
}
