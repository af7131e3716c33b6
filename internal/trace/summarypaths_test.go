package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// latin1 is a folder name that is not UTF-8 (Latin-1 é, and a byte no
// encoding gives), as a file system written by another locale holds.
const latin1 = "r\xe9sultats\xff"

// A dump under a folder whose name is not UTF-8: its summaries carry the
// paths byte for byte (\udcXX in the JSON, valid UTF-8 on the line), the
// join names the very files (a damaged rank's warning is a path that
// exists), the joined verdict is the single-place one, and the marks of a
// run named after that path are followed.
func TestSummaryPathsNotUTF8(t *testing.T) {
	base := filepath.Join(t.TempDir(), latin1)
	dir := filepath.Join(base, "dump")
	spec := synth.Spec{Name: "latin1", Ranks: 4, Steps: []int{0, 1, 2, 3}, Model: synth.Dense, Level: "L1", Fault: logNegative, Seed: 3}
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	cutInHalf(t, rankFile(dir, 2, 3, "dump.json"))
	want, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	roots := splitNodes(t, dir, 2, rand.New(rand.NewSource(1)))
	for i, r := range roots { // the node roots under a name that is not UTF-8 too
		moved := filepath.Join(filepath.Dir(r), latin1, "dump")
		if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(r, moved); err != nil {
			t.Fatal(err)
		}
		roots[i] = moved
	}
	files := summariseNodes(t, roots, false)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) || !bytes.Contains(b, []byte(`r\udce9sultats\udcff`)) {
			t.Fatalf("%s: want valid UTF-8 with the name's bytes as \\udcXX:\n%.400s", f, b)
		}
	}
	got, err := Run(context.Background(), Options{Summaries: files})
	if err != nil {
		t.Fatal(err)
	}
	if w, g := normalised(t, want, dir), normalised(t, got, roots...); w != g {
		t.Fatalf("joined verdict differs from one place:\n%s", lineDiff(w, g))
	}
	damaged := ""
	for _, w := range got.Warnings {
		if strings.HasSuffix(w.File, filepath.Join("step2", "rank3", "dump.json")) {
			damaged = w.File
		}
	}
	if _, err := os.Stat(damaged); damaged == "" || err != nil {
		t.Fatalf("the damaged rank's warning names %q (%v): want the file on disk; warnings %+v", damaged, err, got.Warnings)
	}
	// the verdict as JSON keeps the bytes, and gives them back
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var back verdict.Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b) || !bytes.Contains(b, []byte(`\udce9`)) || !containsWarningFile(back.Warnings, damaged) {
		t.Fatalf("the JSON verdict does not give %q back", damaged)
	}
}

// containsWarningFile reports whether a warning names the file.
func containsWarningFile(ws []verdict.Warning, file string) bool {
	for _, w := range ws {
		if w.File == file {
			return true
		}
	}
	return false
}

// A mark left by a run whose name (the dump path) is not UTF-8 is the
// run's: the other node of the job stops after its step.
func TestSummaryMarkRunNotUTF8(t *testing.T) {
	shared := t.TempDir()
	run := "/data/" + latin1 + "/dump"
	job := Job{ID: "7", From: "slurm"}
	markBoard{dir: shared, run: run, job: job}.leave("", 2, Node{Index: 1})
	after, by, ok, removed := markBoard{dir: shared, run: run, job: job}.earliest("")
	if !ok || after != 2 || by.Node != "node 1" || len(removed) != 0 {
		t.Fatalf("earliest: after %d by %+v ok %v removed %v: want the mark after step 2 of node 1", after, by, ok, removed)
	}
}
