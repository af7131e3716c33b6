//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package watch

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// acquire opens (creating it) and flocks the lock file at path without
// waiting. The lock ends with the process. A symbolic link or what is not
// a regular file is refused, and a file that the watch holding it removed
// between the open and the lock is let go and taken anew.
func acquire(path string) (*os.File, error) {
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: a symbolic link, not a regular file", path)
		}
		if err != nil {
			return nil, err
		}
		info, err := regularLock(path, f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			pid := holderPID(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &LockedError{Path: path, PID: pid}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if now, err := os.Lstat(path); err == nil && os.SameFile(now, info) {
			return f, nil
		}
		f.Close() // removed or replaced meanwhile: the lock is on a file no one else will open
	}
	return nil, fmt.Errorf("lock %s: it keeps being replaced", path)
}
