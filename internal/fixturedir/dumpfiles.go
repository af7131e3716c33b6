package fixturedir

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// DumpFiles lists every dump.json under the fixtures; the test fails when
// there is none.
func DumpFiles(tb testing.TB) []string {
	tb.Helper()
	dir := Dir(tb)
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "dump.json" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		tb.Fatalf("no dump.json under %s", dir)
	}
	return files
}
