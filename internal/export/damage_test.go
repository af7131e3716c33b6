package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// truncate cuts a file to frac of its size.
func truncate(t *testing.T, path string, frac float64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(float64(info.Size())*frac)); err != nil {
		t.Fatal(err)
	}
}

// A truncated dump.json: the rows before the damage are written, the
// warning names the file and the offset, the other files are complete.
func TestTruncatedDump(t *testing.T) {
	src := generate(t, "tie-log-negative")
	bad := filepath.Join(src, "step2", "rank1", "dump.json")
	truncate(t, bad, 0.5)
	wants, damage := readDump(t, bad)
	if damage == nil || len(wants) == 0 {
		t.Fatalf("truncation left %d tensors and damage %v", len(wants), damage)
	}

	s := run(t, Options{Path: src})
	if s.Complete() || s.Damaged != 1 || s.Written != len(s.Files) {
		t.Fatalf("damaged %d, written %d of %d", s.Damaged, s.Written, len(s.Files))
	}
	var w *Warning
	for i := range s.Warnings {
		if s.Warnings[i].File == bad {
			w = &s.Warnings[i]
		}
	}
	if w == nil || w.Offset == nil || *w.Offset != damage.Offset || !strings.Contains(w.String(), bad) || !strings.Contains(w.Message, "offset") {
		t.Fatalf("warnings %v: want one naming %s at offset %d", s.Warnings, bad, damage.Offset)
	}
	out := filepath.Join(s.Out, "step=2", "rank=1", "part-0.parquet")
	checkRows(t, out, readRows(t, out), wants, 2, 1)

	pf := openParquet(t, out)
	if v, ok := pf.Lookup("nanhunt.damage"); !ok || !strings.Contains(v, "offset") {
		t.Errorf("file metadata nanhunt.damage = %q, %v", v, ok)
	}
	m := s.manifest()
	if m.Counts.Damaged != 1 || len(m.Warnings) == 0 {
		t.Errorf("manifest counts %+v, warnings %v", m.Counts, m.Warnings)
	}
}

// A dump.json with nothing before the damage gets no file; when no file
// can be read at all, Run fails.
func TestNothingReadable(t *testing.T) {
	src := generate(t, "tie-log-negative")
	dumps, _ := filepath.Glob(filepath.Join(src, "step*", "rank*", "dump.json"))
	for _, p := range dumps[1:] {
		truncate(t, p, 0)
	}
	s := run(t, Options{Path: src})
	if s.Written != 1 || s.Damaged != len(dumps)-1 {
		t.Fatalf("written %d, damaged %d", s.Written, s.Damaged)
	}
	if got := parquetFiles(t, s.Out); len(got) != 1 {
		t.Errorf("files %v, want one", got)
	}

	truncate(t, dumps[0], 0)
	out := filepath.Join(t.TempDir(), "out")
	s, err := Run(context.Background(), Options{Path: src, Out: out})
	if !errors.Is(err, ErrNothingReadable) || s == nil || s.Written != 0 {
		t.Fatalf("err %v, summary %+v", err, s)
	}
	if _, err := os.Stat(filepath.Join(out, ManifestName)); err != nil {
		t.Errorf("no manifest after a failed export: %v", err)
	}
}

// An unreadable dump.json is a warning, not a failure.
func TestUnreadableDump(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("running as root: permissions do not stop reads")
	}
	src := generate(t, "tie-log-negative")
	bad := filepath.Join(src, "step3", "rank0", "dump.json")
	if err := os.Chmod(bad, 0); err != nil {
		t.Fatal(err)
	}
	s := run(t, Options{Path: src})
	if s.Damaged != 1 || s.Written != len(s.Files)-1 {
		t.Fatalf("damaged %d, written %d of %d", s.Damaged, s.Written, len(s.Files))
	}
	if !strings.Contains(s.Warnings[len(s.Warnings)-1].String(), "unreadable") {
		t.Errorf("warnings %v", s.Warnings)
	}
}
