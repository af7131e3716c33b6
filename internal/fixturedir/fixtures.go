package fixturedir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Root is the absolute path of the fixtures folder, found from the working
// directory (a package folder, when run by go test) by walking up to the
// module root. It does not check that the folder exists.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "fixtures"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Dir is Root joined with parts; the test fails when that path is absent:
// the real fixtures are part of what the tests need, not an option.
func Dir(tb testing.TB, parts ...string) string {
	tb.Helper()
	root, err := Root()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(append([]string{root}, parts...)...)
	if _, err := os.Stat(dir); err != nil {
		tb.Fatalf("real msprobe fixtures not found at %s (they belong in ../shared next to the repository): %v", dir, err)
	}
	return dir
}
