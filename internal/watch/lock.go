package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/safeio"
)

// OutLockName is the lock file a watch holds inside its output folder.
const OutLockName = "watch.lock"

// StateLockSuffix makes the name of the lock file a watch holds beside its
// state file: watch.json.lock for watch.json.
const StateLockSuffix = ".lock"

// ErrLocked is the error of a lock another watch holds.
var ErrLocked = errors.New("another watch holds its lock")

// LockedError says which lock another watch holds, and which process that
// is when its lock file tells.
type LockedError struct {
	Path string // the lock file
	PID  int    // the process that holds it; 0 when the file does not say
	// MayBeStale is set where locks do not end with their process (systems
	// without flock): the file of a watch that crashed is still there.
	MayBeStale bool
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("another watch holds its lock %s", e.Path)
	if e.PID > 0 {
		msg += fmt.Sprintf(" (process %d)", e.PID)
	}
	if e.MayBeStale {
		msg += "; when no watch runs, a watch that crashed left it: remove it"
	}
	return msg
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a lock file held by this process: a second watch on the same
// output folder or state file is refused at once. Where the system has
// flock(2) the lock ends with the process, whatever ends it, so a crash
// leaves no stale lock; the file is removed on Release.
type Lock struct {
	path string
	f    *os.File
}

// LockOut takes the lock of the output folder dir, which must exist.
func LockOut(dir string) (*Lock, error) { return lockFile(OutLockPath(dir)) }

// OutLockPath is the lock file of the output folder dir.
func OutLockPath(dir string) string { return filepath.Join(dir, OutLockName) }

// LockState takes the lock beside the state file (StateLockPath).
func LockState(file string) (*Lock, error) { return lockFile(StateLockPath(file)) }

// StateLockPath is the lock file of a state file: beside the file its
// symbolic links lead to, so that two names of one state file share one
// lock, or, when it does not exist yet, in the real folder it will be
// written to.
func StateLockPath(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if real, err := filepath.EvalSymlinks(file); err == nil {
		return real + StateLockSuffix
	}
	dir, base := filepath.Split(file)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, base+StateLockSuffix)
}

// lockFile takes the lock file at path, and writes this process's id in
// it, for the message of a watch refused.
func lockFile(path string) (*Lock, error) {
	f, err := acquire(path)
	if err != nil {
		return nil, err
	}
	// best effort: a full disk keeps the id out, not the lock
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{path: path, f: f}, nil
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Release removes the lock file, when it is still the one held, and lets
// the lock go. A nil Lock releases nothing.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if now, err := os.Lstat(l.path); err == nil {
		if held, err := l.f.Stat(); err == nil && os.SameFile(now, held) {
			os.Remove(l.path)
		}
	}
	l.f.Close()
	l.f = nil
}

// holderPID reads the process id a lock file holds, 0 when it holds none:
// its bytes are read as a number and nothing else.
func holderPID(f *os.File) int {
	var b [24]byte
	n, _ := f.ReadAt(b[:], 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// regularLock refuses a lock file that is not a regular file.
func regularLock(path string, f *os.File) (os.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, not a regular file", path, safeio.Kind(info.Mode()))
	}
	return info, nil
}
