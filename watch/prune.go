package watch

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/dump"
)

// Prune deletes the tensor files (stepN/rankR/dump_tensor_data/) of steps
// the watch has checked and found clean, keeping those of the last Keep
// clean steps, so that a tensor dump of every step fits on the disk of a
// long run. It is the one place where nanhunt writes inside a dump, and
// only when asked: it never touches dump.json, stack.json or
// construct.json, nor a step that is not checked clean (the anomaly, the
// step that confirmed it, a step that did not last, a step some expected
// rank of which was not read whole: every rank of it keeps its tensors),
// nor a rank folder that appeared after the step was read.
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
// Links are not followed.
func (p *Prune) prune(step cleanStep) {
	ents, err := os.ReadDir(step.dir)
	if err != nil {
		p.logf("%s: %v", step.dir, err)
		return
	}
	stepDir := step.dir
	var ranks []string
	for _, e := range ents {
		if r, ok := dump.Numbered(e.Name(), "rank"); ok && e.IsDir() && slices.Contains(step.ranks, r) {
			ranks = append(ranks, e.Name())
		}
	}
	sort.Slice(ranks, func(i, j int) bool { return rankNumber(ranks[i]) < rankNumber(ranks[j]) })
	for _, r := range ranks {
		dir := filepath.Join(stepDir, r, tensorFolder)
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			continue // no tensors, or a link: left alone
		}
		files, bytes, err := deleteFiles(dir)
		if err != nil {
			p.logf("%s: %v", dir, err)
		}
		if files > 0 {
			p.logf("deleted %s: %d files, %d bytes (the step was checked clean)", dir, files, bytes)
		}
		os.Remove(dir) // only when empty
	}
}

// deleteFiles removes the regular files directly in dir.
func deleteFiles(dir string) (int, int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	n, bytes := 0, int64(0)
	for _, e := range ents {
		if e.Type()&fs.ModeType != 0 {
			continue // a folder, a link, a device: not a tensor file
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return n, bytes, err
		}
		n++
		bytes += info.Size()
	}
	return n, bytes, nil
}

func rankNumber(name string) int {
	n, _ := dump.Numbered(name, "rank")
	return n
}

func (p *Prune) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", args...)
	}
}
