package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// splitByRank copies the rank folders of dump into n node folders
// (nodeK/dump, rank r on node r%n).
func splitByRank(t *testing.T, dump, base string, n int) {
	t.Helper()
	steps, _ := filepath.Glob(filepath.Join(dump, "step*", "rank*"))
	if len(steps) == 0 {
		t.Fatalf("no rank folder under %s", dump)
	}
	for _, rd := range steps {
		r, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(rd), "rank"))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(base, "node"+strconv.Itoa(r%n), "dump", filepath.Base(filepath.Dir(rd)), filepath.Base(rd))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(rd, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// summarize on each node folder, then trace on the folder of summaries,
// gives the verdict of trace on the dump, and the same exit status.
func TestSummarizeThenTrace(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump")
	if _, stderr, code := runCLI(t, "synth", "--scenario", "sendrecv-carrier", "-o", dump); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	splitByRank(t, dump, filepath.Join(dir, "nodes"), 3)
	sums := filepath.Join(dir, "sums") + "/"
	for k := 0; k < 3; k++ {
		_, stderr, code := runCLI(t, "summarize", filepath.Join(dir, "nodes", "node{node}", "dump"), "--node-index", strconv.Itoa(k), "--nodes", "3", "-o", sums)
		if code != 0 || !strings.Contains(stderr, "summarised") {
			t.Fatalf("summarize node %d: exit %d: %s", k, code, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(sums, "summary-node*.jsonl"))
	if len(files) != 3 {
		t.Fatalf("summaries %v, want 3", files)
	}
	want, _, wcode := runCLI(t, "trace", dump, "--format", "json")
	got, stderr, gcode := runCLI(t, "trace", sums, "--format", "json")
	if wcode != 1 || gcode != wcode {
		t.Fatalf("exit %d joined, %d in one place: %s", gcode, wcode, stderr)
	}
	norm := func(s string, roots ...string) string {
		for _, r := range roots {
			s = strings.ReplaceAll(s, r, "ROOT")
		}
		return s
	}
	var roots []string
	for k := 0; k < 3; k++ {
		roots = append(roots, filepath.Join(dir, "nodes", "node"+strconv.Itoa(k), "dump"))
	}
	if norm(want, dump) != norm(got, roots...) {
		t.Errorf("joined verdict differs:\n%s\nwant\n%s", got, want)
	}
	// the summary files may also be named one by one
	got2, _, _ := runCLI(t, append([]string{"trace", "--format", "json"}, files...)...)
	if got2 != got {
		t.Errorf("the files one by one give another verdict than their folder")
	}
	steps, _, code := runCLI(t, "trace", "--detail-steps", sums)
	if code != 0 || strings.TrimSpace(steps) == "" {
		t.Errorf("--detail-steps: exit %d, %q", code, steps)
	}
}

func TestSummarizeUsage(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump")
	if _, stderr, code := runCLI(t, "synth", "--scenario", "log-negative", "-o", dump); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	sum := filepath.Join(dir, "one.jsonl")
	if _, stderr, code := runCLI(t, "summarize", dump, "-o", sum); code != 0 {
		t.Fatalf("summarize: %s", stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"summarize", dump}, "-o OUT is required"},
		{[]string{"summarize", dump, "-o", filepath.Join(dump, "sum.jsonl")}, "inside the dump"},
		{[]string{"summarize", dump, "-o", sum, "--jobs", "0"}, "--jobs 0"},
		{[]string{"summarize", dump, "-o", sum + "2", "--node-index", "4", "--nodes", "2"}, "--node-index 4"},
		{[]string{"trace", dump, sum}, "not a nanhunt summary"},
		{[]string{"trace", sum, "-o", sum}, "same file"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
