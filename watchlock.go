package nanhunt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nanhunt/nanhunt/internal/watch"
)

// watchLocks are the locks a watch holds on its output folder and its
// state file while it runs: a second watch on either is refused at once
// rather than raise the alarm (and run the hook) again.
type watchLocks struct {
	out, state *watch.Lock
	outDir     string
	madeOut    bool // the output folder did not exist before this watch
}

// lockWatch makes the output folder and takes its lock, then the state
// file's (each when there is one). The folder is made at the start
// because its lock lies in it; release removes it again when it is left
// empty.
func lockWatch(outDir, state string) (*watchLocks, error) {
	l := &watchLocks{outDir: outDir}
	if outDir != "" {
		_, err := os.Stat(outDir)
		l.madeOut = errors.Is(err, fs.ErrNotExist)
		if l.out, err = lockOut(outDir); err != nil {
			l.release()
			return nil, fmt.Errorf("-o %s: %w", outDir, err)
		}
	}
	if state != "" {
		var err error
		if l.state, err = watch.LockState(state); err != nil {
			l.release()
			return nil, fmt.Errorf("--state %s: %w", state, err)
		}
	}
	return l, nil
}

// lockOut makes the output folder and takes its lock; a folder that
// another watch removed between the two (it was empty when that one
// ended) is made again.
func lockOut(outDir string) (*watch.Lock, error) {
	for try := 0; ; try++ {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return nil, err
		}
		l, err := watch.LockOut(outDir)
		if err == nil || try == 2 || !errors.Is(err, fs.ErrNotExist) {
			return l, err
		}
	}
}

// release lets the locks go, removes their files, and removes the output
// folder when this watch made it and wrote nothing there.
func (l *watchLocks) release() {
	l.state.Release()
	l.out.Release()
	if l.madeOut {
		os.Remove(l.outDir) // only when empty
	}
}

// openPruneLog opens DIR/pruned.log for appending: the record of what
// PruneKeep deleted, outside the dump.
func openPruneLog(outDir string) (*os.File, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(outDir, "pruned.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
}
