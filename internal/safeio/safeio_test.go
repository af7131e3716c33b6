package safeio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{zero, "a character device, not a regular file"},
		{dir, "a directory, not a regular file"},
		{filepath.Join(dir, "nope"), "no such file"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(tc.path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%s) = %v, want an error with %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocks", tc.path)
		}
	}
	f, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(file, 1); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ReadFile over its cap: %v", err)
	}
	if b, err := ReadFile(file, 2); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3870000: "3.7 MiB", 50 << 30: "50.0 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// A symbolic link is followed: to a regular file it is read (a dump whose
// files were linked from another disk), to anything else it is refused as
// what it leads to, and a link that leads nowhere is an error.
func TestOpenFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "dump.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ target, name string }{
		{file, "to-file"}, {"dump.json", "relative"}, {dir, "to-dir"}, {"/dev/zero", "to-device"},
		{filepath.Join(dir, "gone"), "dangling"}, {"loop", "loop"},
	} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, err string // err "": read
	}{
		{"to-file", ""},
		{"relative", ""},
		{"to-dir", "a directory, not a regular file"},
		{"to-device", "a character device, not a regular file"},
		{"dangling", "no such file"},
		{"loop", "too many levels of symbolic links"},
	}
	for _, tt := range tests {
		b, err := ReadFile(filepath.Join(dir, tt.name), 2)
		switch {
		case tt.err == "" && (err != nil || string(b) != "{}"):
			t.Errorf("%s: %q, %v; want the file read", tt.name, b, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %v; want an error with %q", tt.name, err, tt.err)
		}
	}
}
