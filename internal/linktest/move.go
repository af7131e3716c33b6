package linktest

import (
	"os"
	"path/filepath"
	"testing"
)

// Move moves the folder or file from to to (creating to's parent) and
// leaves in its place a symbolic link to target: to itself, or a relative
// spelling of it. The test fails when any of it cannot be done.
func Move(tb testing.TB, from, to, target string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(target, from); err != nil {
		tb.Fatal(err)
	}
}
