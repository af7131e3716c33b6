//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package watch

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A second lock on one output folder is refused at once, naming the lock
// file and the process that holds it; released, the lock is free again
// and its file gone.
func TestLockRefusesASecondWatch(t *testing.T) {
	dir := t.TempDir()
	first, err := LockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockOut(dir)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.PID != os.Getpid() || le.Path != filepath.Join(dir, OutLockName) {
		t.Fatalf("a second lock: %v (%+v), want a LockedError naming %s and process %d", err, le, OutLockName, os.Getpid())
	}
	first.Release()
	if _, err := os.Stat(filepath.Join(dir, OutLockName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after Release: %v", err)
	}
	again, err := LockOut(dir)
	if err != nil {
		t.Fatalf("the lock after Release: %v", err)
	}
	again.Release()
	again.Release() // twice is harmless
}

// Two names of one state file, a symbolic link among them, share one lock.
func TestStateLockFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "watch.json")
	if err := os.WriteFile(state, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(state, link); err != nil {
		t.Fatal(err)
	}
	l, err := LockState(state)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := LockState(link); !errors.Is(err, ErrLocked) {
		t.Errorf("the state's link took its own lock: %v", err)
	}
	if got, want := StateLockPath("watch.json"), "watch.json"+StateLockSuffix; !filepath.IsAbs(got) || filepath.Base(got) != want {
		t.Errorf("StateLockPath of a relative name: %s", got)
	}
}

// A lock file that is a symbolic link, a named pipe or a folder is
// refused at once, and nothing is written through it.
func TestLockFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "target")
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"link", "a symbolic link", func(p string) error { return os.Symlink(elsewhere, p) }},
		{"fifo", "a named pipe (FIFO), not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"folder", "is a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			os.Mkdir(out, 0o755)
			if err := tc.make(filepath.Join(out, OutLockName)); err != nil {
				t.Fatal(err)
			}
			err := unblocked(t, "LockOut", func() error {
				l, err := LockOut(out)
				l.Release()
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LockOut = %v, want an error with %q", err, tc.want)
			}
			if _, err := os.Lstat(elsewhere); err == nil {
				t.Errorf("a file was made where the link leads")
			}
		})
	}
}

// holderEnv makes the test binary a process that holds the lock of the
// folder it names, until it is killed.
const holderEnv = "NANHUNT_TEST_LOCK_HOLDER"

// TestLockHolder is the holding process of TestLockEndsWithItsProcess.
func TestLockHolder(t *testing.T) {
	dir := os.Getenv(holderEnv)
	if dir == "" {
		t.Skip("run by TestLockEndsWithItsProcess")
	}
	if _, err := LockOut(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}

// The lock of a watch that was killed (no Release: a crash, SIGKILL, the
// node going down) is free at once: no stale lock, though its file stays.
func TestLockEndsWithItsProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolder$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder said %q", line)
	}
	var le *LockedError
	if _, err := LockOut(dir); !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("the lock of a running holder: %v, want process %d named", err, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, OutLockName)); err != nil {
		t.Fatalf("the killed holder's lock file: %v", err)
	}
	l, err := LockOut(dir)
	if err != nil {
		t.Fatalf("the lock of a killed watch is still held: %v", err)
	}
	l.Release()
}
