package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutputRefusals(t *testing.T) {
	src := generate(t, "level-l1")
	tmp := t.TempDir()
	nonEmpty := filepath.Join(tmp, "notes")
	os.MkdirAll(nonEmpty, 0o755)
	os.WriteFile(filepath.Join(nonEmpty, "keep.txt"), []byte("mine"), 0o644)
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o644)
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, out string
		want            error
		msg             string
	}{
		{"the dump folder itself", src, src, ErrInsideDump, ""},
		{"inside the dump", src, filepath.Join(src, "step1", "export"), ErrInsideDump, ""},
		{"inside the rank folder given", filepath.Join(src, "step1", "rank0"), filepath.Join(src, "step1", "rank0", "x"), ErrInsideDump, ""},
		{"next to the dump.json given", filepath.Join(src, "step1", "rank0", "dump.json"), filepath.Join(src, "step1", "rank0", "x"), ErrInsideDump, ""},
		{"inside through a symbolic link", link, filepath.Join(src, "x"), ErrInsideDump, ""},
		{"non-empty", src, nonEmpty, ErrNotEmpty, ""},
		{"a file", src, file, nil, "not a folder"},
		{"no output", src, "", nil, "no output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), Options{Path: tt.path, Out: tt.out})
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %v, want %v %q", err, tt.want, tt.msg)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(src, "step1", "export")); err == nil {
		t.Error("wrote inside the dump")
	}
}

// --force writes into a non-empty folder; an earlier export there is
// replaced, so its partitions do not mix with the new ones; other files
// are left alone.
func TestForce(t *testing.T) {
	src := generate(t, "level-l1")
	out := filepath.Join(t.TempDir(), "out")
	run(t, Options{Path: src, Out: out})
	before := parquetFiles(t, out)
	if _, err := Run(context.Background(), Options{Path: src, Out: out, Steps: map[int]bool{2: true}}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("second export without force: %v", err)
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	run(t, Options{Path: src, Out: out, Steps: map[int]bool{2: true}, Force: true})
	after := parquetFiles(t, out)
	for _, f := range after {
		if f != "notes.txt" && !strings.HasPrefix(f, "step=2/") {
			t.Errorf("stale file %s after --force (before: %v)", f, before)
		}
	}
	if len(after) < 2 || len(after) >= len(before)+1 {
		t.Errorf("files after --force: %v", after)
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err != nil {
		t.Error("--force removed a file it did not write")
	}
}
