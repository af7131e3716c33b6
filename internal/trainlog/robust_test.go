package trainlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedInput: truncated, garbage and giant input gives warnings,
// never a panic, and what was readable is still read.
func TestDamagedInput(t *testing.T) {
	good := megLineText(1, "2.0", "1.0", 0, 0) + megLineText(2, "nan", "1.0", 0, 0)
	rng := rand.New(rand.NewPCG(1, 1))
	garbage := make([]byte, 200000)
	for i := range garbage {
		garbage[i] = byte(rng.IntN(256))
	}
	for _, tc := range []struct {
		name, content string
		warn          string // a warning containing this, "" for none
		first         int    // the first non-finite iteration, -1 for none
	}{
		{"truncated megatron line", good + megLineText(3, "nan", "1.0", 0, 0)[:60], "", 2},
		{"giant line", megLineText(1, "2.0", "1.0", 0, 0) + strings.Repeat("x", 1<<20) + "\n" + megLineText(2, "nan", "1.0", 0, 0), "longer than 65536 bytes", 2},
		{"giant megatron line", " iteration 1/2 | lm loss: nan |" + strings.Repeat(" pad: 1 |", 20000) + "\n", "longer than", 1},
		{"garbage then good", string(garbage) + "\n" + good, "", 2},
		{"truncated JSON", `{"rank": 0, "steps": [{"step": 0, "loss": 1.0}, {"step": 1, "loss": NaN}, {"step": 2, "lo`, "ends early", 1},
		{"bad JSON", `{"rank": 0, "steps": [{"step": 0, "loss": NaN}, {"step": 1, "loss": nan}]}`, "bad JSON", 0},
		{"huge numbers", " iteration 99999999999999999999999/1 | loss: nan |\n iteration 5/999999999999999999999 | lm loss: 1e999999 | number of skipped iterations: 99999999999999999999 |\n", "", 5},
		{"deep JSON", strings.Repeat("[", 100000), "bad JSON", -1},
		{"JSON huge step", `[{"step": 1e300, "loss": NaN}, {"step": 3, "loss": NaN}]`, "not a step number", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := writeFiles(t, "rank0.log", tc.content)
			l, err := Read(context.Background(), paths, Options{})
			if tc.first < 0 {
				if err == nil || !strings.Contains(err.Error(), "no training-log lines recognised") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f := l.Summary().FirstNonFinite; f == nil || f.Iteration != tc.first {
				t.Errorf("first = %+v, want iteration %d", f, tc.first)
			}
			found := tc.warn == ""
			for _, w := range l.Warnings {
				if strings.Contains(w.Message, tc.warn) && w.File == paths[0] {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning with %q in %v", tc.warn, l.Warnings)
			}
		})
	}
}

// TestFiles: missing files, folders, unrecognised files and gzip.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(megLineText(1, "2.0", "1.0", 0, 0) + megLineText(2, "2.0", "inf", 0, 0)))
	zw.Close()
	gzPath := filepath.Join(dir, "rank1.log.gz")
	os.WriteFile(gzPath, gz.Bytes(), 0o644)
	badGz := filepath.Join(dir, "rank2.log.gz")
	os.WriteFile(badGz, gz.Bytes()[:len(gz.Bytes())/2], 0o644)
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("nothing to see\n"), 0o644)
	missing := filepath.Join(dir, "missing.log")

	l, err := Read(context.Background(), []string{missing, dir, other, gzPath, badGz}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := l.Summary().FirstNonFinite; f == nil || f.Iteration != 2 || f.Kind != "inf" || f.File != gzPath {
		t.Errorf("first = %+v", f)
	}
	want := map[string]string{missing: "cannot open", dir: "a directory, not a regular file", other: "no training-log line recognised", badGz: "read stopped"}
	for path, msg := range want {
		ok := false
		for _, w := range l.Warnings {
			if w.File == path && strings.Contains(w.Message, msg) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no warning %q for %s in %v", msg, path, l.Warnings)
		}
	}
	if len(l.Files) != 5 || l.Files[0].Format != "" || l.Files[3].Format != FormatMegatron || l.Files[3].Rank != 1 {
		t.Errorf("files %s", jsonOf(t, l.Files, dir))
	}

	if _, err := Read(context.Background(), []string{missing}, Options{}); err == nil || !strings.Contains(err.Error(), "no file could be read") {
		t.Errorf("all missing: %v", err)
	}
	if _, err := Read(context.Background(), nil, Options{}); err == nil {
		t.Error("no paths: no error")
	}
	if _, err := Read(context.Background(), []string{other}, Options{}); err == nil || !strings.Contains(err.Error(), "no training-log lines recognised") {
		t.Errorf("nothing recognised: %v", err)
	}
}

// TestKeepFinite: plainly finite records beyond the limit are counted, not
// kept; the summary does not change.
func TestKeepFinite(t *testing.T) {
	var b strings.Builder
	for it := 1; it <= 50; it++ {
		loss := "2.0"
		if it == 40 {
			loss = "nan"
		}
		b.WriteString(megLineText(it, loss, "1.0", 0, 0))
	}
	paths := writeFiles(t, "rank0.log", b.String())
	all := mustRead(t, paths, Options{})
	few := mustRead(t, paths, Options{KeepFinite: 5})
	none := mustRead(t, paths, Options{KeepFinite: -1})
	if len(all.Records) != 50 || len(few.Records) != 6 || len(none.Records) != 1 || few.Files[0].Dropped != 44 || few.Files[0].Records != 50 {
		t.Fatalf("kept %d, %d, %d; file %+v", len(all.Records), len(few.Records), len(none.Records), few.Files[0])
	}
	if none.Records[0].Iteration != 40 {
		t.Errorf("kept %+v", none.Records[0])
	}
	a, n := jsonOf(t, all.Summary(), ""), jsonOf(t, none.Summary(), "")
	if a != n {
		t.Errorf("summaries differ:\n%s\n%s", a, n)
	}
}

// TestWarningCap: one file cannot flood the warnings.
func TestWarningCap(t *testing.T) {
	l := mustRead(t, writeFiles(t, "a.jsonl", `{"step": 0, "loss": NaN}`+"\n"+strings.Repeat("{bad}\n", 100)), Options{})
	if len(l.Warnings) != maxWarningsPerFile+1 || !strings.Contains(l.Warnings[maxWarningsPerFile].Message, "80 more warnings") {
		t.Errorf("%d warnings, last %v", len(l.Warnings), l.Warnings[len(l.Warnings)-1])
	}
}
