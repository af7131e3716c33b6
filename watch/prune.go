package watch

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/nanhunt/nanhunt/dump"
)

// Prune deletes the tensor files (stepN/rankR/dump_tensor_data/) of steps
// the watch has checked and found clean, keeping those of the last Keep
// clean steps, so that a tensor dump of every step fits on the disk of a
// long run. It is the one place where nanhunt writes inside a dump, and
// only when asked: it never touches dump.json, stack.json or
// construct.json, nor a step that is not checked clean (the anomaly, the
// step that confirmed it, a step that did not last).
type Prune struct {
	Keep int
	// Log receives a line for each folder pruned (and each failure).
	Log io.Writer

	clean []string // the folders of the clean steps kept so far, oldest first
}

// tensorFolder is where msprobe writes a rank's tensors.
const tensorFolder = "dump_tensor_data"

// stepClean records a clean step's folder and prunes the oldest ones past
// Keep.
func (p *Prune) stepClean(dir string) {
	p.clean = append(p.clean, dir)
	for len(p.clean) > p.Keep {
		p.prune(p.clean[0])
		p.clean = p.clean[1:]
	}
}

// prune deletes the regular files of every rankR/dump_tensor_data folder of
// one step, and the folders once empty. Links are not followed.
func (p *Prune) prune(stepDir string) {
	ents, err := os.ReadDir(stepDir)
	if err != nil {
		p.logf("%s: %v", stepDir, err)
		return
	}
	var ranks []string
	for _, e := range ents {
		if _, ok := dump.Numbered(e.Name(), "rank"); ok && e.IsDir() {
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
