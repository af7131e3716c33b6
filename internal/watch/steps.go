package watch

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
)

// listing is what the dump_path holds at one look: for every step folder,
// the ranks that have a folder in it.
type listing struct {
	steps []int          // ascending
	ranks map[int][]int  // step -> ranks, ascending
	dirs  map[int]string // step -> folder (of the late steps too)
	last  map[int]int    // rank -> the latest step it has a folder in
	late  []int          // steps before first that late asked for, ascending (their ranks are not listed)
}

// look lists the step folders of root and the rank folders of the steps
// from first on (earlier steps are done and not looked at again), and the
// earlier step folders for which late, when set, is true. Folders that
// are symbolic links to folders count, as trace reads them.
func look(root string, first int, late func(step int) bool) (*listing, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	l := &listing{ranks: map[int][]int{}, dirs: map[int]string{}, last: map[int]int{}}
	for _, e := range ents {
		s, ok := dumplayout.Numbered(e.Name(), "step")
		if !ok || s < first && (late == nil || !late(s)) || !dumplayout.IsFolder(root, e) {
			continue
		}
		if s < first {
			l.late = append(l.late, s)
		} else {
			l.steps = append(l.steps, s)
		}
		l.dirs[s] = filepath.Join(root, e.Name())
	}
	sort.Ints(l.steps)
	sort.Ints(l.late)
	for _, s := range l.steps {
		// a folder being created, or gone, has none: looked at again next time
		l.ranks[s] = ranksIn(l.dirs[s])
		for _, r := range l.ranks[s] {
			l.last[r] = max(l.last[r], s)
		}
	}
	return l, nil
}

// ranksBefore are the ranks of the last step folder of root before step
// that holds rank folders: those a watch starting at step (From, or
// resumed from its state) expects besides the ones it sees, so that a rank
// that stopped writing before it is not forgotten.
func ranksBefore(root string, step int) []int {
	dirs := stepsBefore(root, step, math.MaxInt)
	for i := len(dirs) - 1; i >= 0; i-- {
		if ranks := ranksIn(dirs[i]); len(ranks) > 0 {
			return ranks
		}
	}
	return nil
}

// ranksIn are the ranks that have a folder in a step folder, ascending.
func ranksIn(dir string) []int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var ranks []int
	for _, e := range ents {
		if r, ok := dumplayout.Numbered(e.Name(), "rank"); ok && dumplayout.IsFolder(dir, e) {
			ranks = append(ranks, r)
		}
	}
	sort.Ints(ranks)
	return ranks
}

// fileState is what one rank's dump.json looked like when last seen.
type fileState struct {
	size    int64
	modTime time.Time
	since   time.Time // when it was first seen like this
}

// stable reports whether the file has looked the same for settle, updating
// what was seen.
func (f *fileState) stable(path string, now time.Time, settle time.Duration) (exists, stable bool) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		*f = fileState{}
		return false, false
	}
	if info.Size() != f.size || !info.ModTime().Equal(f.modTime) || f.since.IsZero() {
		*f = fileState{size: info.Size(), modTime: info.ModTime(), since: now}
	}
	return true, now.Sub(f.since) >= settle && info.Size() > 0
}
