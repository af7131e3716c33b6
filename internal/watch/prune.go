package watch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
)

// Prune deletes the tensor files (stepN/rankR/dump_tensor_data/) of steps
// the watch has checked and found clean, keeping those of the last Keep
// clean steps, so that a tensor dump of every step fits on the disk of a
// long run. It is the one place where nanhunt writes inside a dump, and
// only when asked: it never touches dump.json, stack.json or
// construct.json, nor a step that is not checked clean (the anomaly, the
// step that confirmed it, a step that did not last, a step some expected
// rank of which was not read whole: every rank of it keeps its tensors),
// nor a rank folder that appeared after the step was read, and follows no
// symbolic link (a linked step, rank or tensor folder keeps its tensors).
type Prune struct {
	Keep int
	// Log receives a line for each folder pruned (and each failure).
	Log io.Writer

	clean []cleanStep // the clean steps kept so far, oldest first
}

// cleanStep is a step checked clean: its folder and the ranks that were
// read whole in it.
type cleanStep struct {
	dir   string
	ranks []int
}

// tensorFolder is where msprobe writes a rank's tensors.
const tensorFolder = "dump_tensor_data"

// stepClean records a clean step's folder and the ranks read whole in it,
// and prunes the oldest ones past Keep.
func (p *Prune) stepClean(dir string, ranks []int) {
	p.clean = append(p.clean, cleanStep{dir: dir, ranks: slices.Clone(ranks)})
	for len(p.clean) > p.Keep {
		p.prune(p.clean[0])
		p.clean = p.clean[1:]
	}
}

// prune deletes the regular files of the rankR/dump_tensor_data folders of
// the ranks of one step that were read whole, and the folders once empty.
// It follows no links: a step, rank
// or tensor folder that is a symbolic link is left alone and logged, and
// each folder is opened inside the one above it and checked to be the one
// looked at, so that a link put in its place meanwhile is not followed
// either.
func (p *Prune) prune(cs cleanStep) {
	stepDir := cs.dir
	step, err := openFolder(nil, stepDir)
	if err != nil {
		p.logf("%s: %v", stepDir, err)
		return
	}
	defer step.Close()
	ranks, err := rankFolders(step)
	if err != nil {
		p.logf("%s: %v", stepDir, err)
		return
	}
	for _, r := range ranks {
		if slices.Contains(cs.ranks, rankNumber(r)) {
			p.pruneRank(step, r, filepath.Join(stepDir, r))
		}
	}
}

// pruneRank deletes the tensor files of the rank folder name of step
// (path, for the log).
func (p *Prune) pruneRank(step *os.Root, name, path string) {
	rank, err := openFolder(step, name)
	if err != nil {
		p.logf("%s: %v", path, err)
		return
	}
	defer rank.Close()
	dir := filepath.Join(path, tensorFolder)
	tensors, err := openFolder(rank, tensorFolder)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return // no tensors
	case err != nil:
		p.logf("%s: %v", dir, err)
		return
	}
	files, bytes, err := deleteFiles(tensors)
	tensors.Close()
	if err != nil {
		p.logf("%s: %v", dir, err)
	}
	if files > 0 {
		p.logf("deleted %s: %d files, %d bytes (the step was checked clean)", dir, files, bytes)
	}
	rank.Remove(tensorFolder) // only when empty
}

// errLink is why a folder that is a symbolic link is not pruned.
var errLink = errors.New("a symbolic link, not followed: its tensors are left alone")

// openFolder opens the folder name inside parent (nil: name is a path),
// refusing a symbolic link, anything but a folder, and a folder that is
// not the one looked at first.
func openFolder(parent *os.Root, name string) (*os.Root, error) {
	lstat, open := os.Lstat, os.OpenRoot
	if parent != nil {
		lstat, open = parent.Lstat, parent.OpenRoot
	}
	info, err := lstat(name)
	switch {
	case err != nil:
		return nil, err
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, errLink
	case !info.IsDir():
		return nil, errors.New("not a folder")
	}
	r, err := open(name)
	if err != nil {
		return nil, err
	}
	if now, err := r.Stat("."); err != nil || !os.SameFile(now, info) {
		r.Close()
		return nil, errors.New("replaced while it was opened: left alone")
	}
	return r, nil
}

// rankFolders lists the rankR entries of a step folder in rank order,
// links among them too (openFolder refuses those, and the log says so).
func rankFolders(step *os.Root) ([]string, error) {
	ents, err := readRoot(step)
	if err != nil {
		return nil, err
	}
	var ranks []string
	for _, e := range ents {
		if _, ok := dumplayout.Numbered(e.Name(), "rank"); ok && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			ranks = append(ranks, e.Name())
		}
	}
	sort.Slice(ranks, func(i, j int) bool { return rankNumber(ranks[i]) < rankNumber(ranks[j]) })
	return ranks, nil
}

// readRoot lists the entries of the folder r is opened at.
func readRoot(r *os.Root) ([]fs.DirEntry, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// deleteFiles removes the regular files directly in the folder dir is
// opened at; links, folders and devices are not tensor files.
func deleteFiles(dir *os.Root) (int, int64, error) {
	ents, err := readRoot(dir)
	if err != nil {
		return 0, 0, err
	}
	n, bytes := 0, int64(0)
	for _, e := range ents {
		if e.Type()&fs.ModeType != 0 {
			continue
		}
		info, err := dir.Lstat(e.Name())
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if err := dir.Remove(e.Name()); err != nil {
			return n, bytes, err
		}
		n++
		bytes += info.Size()
	}
	return n, bytes, nil
}

func rankNumber(name string) int {
	n, _ := dumplayout.Numbered(name, "rank")
	return n
}

func (p *Prune) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", args...)
	}
}
