package dump

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/bytesearch"
)

// Skipping entries by their closing lines (ReaderOptions.Indent) gives the
// entries, byte ranges and end that following their brackets gives, on the
// real msprobe dumps (indent 1 and 4) and through small read windows.
func TestReaderSkipsByLinesOnRealDumps(t *testing.T) {
	var files []string
	for _, pat := range []string{"msprobe-generated/*/*/step*/rank*/dump.json", "msprobe-real/*/step*/*/dump.json"} {
		m, _ := filepath.Glob(filepath.Join(sharedDir(t), pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no real dump.json found")
	}
	skipped := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := bytesearch.NewPrefilter(0, 0, bytesearch.SearchRules{IgnoredStats: []string{"Mean", "Norm"}}).Scan(bytes.NewReader(data))
		if err != nil || h.Indent == 0 {
			continue
		}
		for _, win := range []int{0, 4096} {
			walk := func(indent int) string {
				var out strings.Builder
				r := NewReader(bytes.NewReader(data), ReaderOptions{WindowSize: win, Indent: indent,
					Select: func(name string, off int64) bool { return off%3 == 0 }})
				for r.Next() {
					e := r.Entry()
					fmt.Fprintf(&out, "%s %d %d %v\n", e.Name, e.Offset, e.End, e.Skipped)
					if e.Skipped && indent > 0 {
						skipped++
					}
				}
				fmt.Fprintf(&out, "end %v", r.Err())
				return out.String()
			}
			if got, want := walk(h.Indent), walk(0); got != want {
				t.Fatalf("%s, window %d: skipped by lines\n%.2000s\nby brackets\n%.2000s", path, win, got, want)
			}
		}
	}
	if skipped == 0 {
		t.Fatal("no entry was skipped by its closing line")
	}
}
