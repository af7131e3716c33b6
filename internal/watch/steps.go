package watch

import (
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
	dirs  map[int]string // step -> folder
	last  map[int]int    // rank -> the latest step it has a folder in
}

// look lists the step folders of root and the rank folders of the steps
// from first on (earlier steps are done and not looked at again). Folders
// that are symbolic links to folders count, as trace reads them.
func look(root string, first int) (*listing, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	l := &listing{ranks: map[int][]int{}, dirs: map[int]string{}, last: map[int]int{}}
	for _, e := range ents {
		s, ok := dumplayout.Numbered(e.Name(), "step")
		if !ok || s < first || !dumplayout.IsFolder(root, e) {
			continue
		}
		l.steps = append(l.steps, s)
		l.dirs[s] = filepath.Join(root, e.Name())
	}
	sort.Ints(l.steps)
	for _, s := range l.steps {
		ents, err := os.ReadDir(l.dirs[s])
		if err != nil {
			continue // being created, or gone: looked at again next time
		}
		for _, e := range ents {
			r, ok := dumplayout.Numbered(e.Name(), "rank")
			if !ok || !dumplayout.IsFolder(l.dirs[s], e) {
				continue
			}
			l.ranks[s] = append(l.ranks[s], r)
			l.last[r] = max(l.last[r], s)
		}
		sort.Ints(l.ranks[s])
	}
	return l, nil
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
