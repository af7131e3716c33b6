//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package watch

import (
	"errors"
	"io/fs"
	"os"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

// acquire creates the lock file at path, and refuses when it exists: on a
// system without flock the file itself is the lock, so one that a crashed
// watch left must be removed by hand (the message says so).
func acquire(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		pid := 0
		if held, err := safeio.Open(path); err == nil {
			pid = holderPID(held)
			held.Close()
		}
		return nil, &LockedError{Path: path, PID: pid, MayBeStale: true}
	}
	if err != nil {
		return nil, err
	}
	if _, err := regularLock(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
