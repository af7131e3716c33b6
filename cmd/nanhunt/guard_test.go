package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/outguard"
)

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is every file under root with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			files[p] = string(b)
		}
		return nil
	})
	return files
}

// guardRun is a run: a copy of a small tensor dump, a training log, a
// rules file, a monitor output and a saved verdict, with hard links to
// some of them outside the dump.
type guardRun struct {
	root, dump, rank, log, rules, monitor, csv, verdict string
}

func newGuardRun(t *testing.T) guardRun {
	t.Helper()
	root := t.TempDir()
	r := guardRun{root: root, dump: filepath.Join(root, "dump"), log: filepath.Join(root, "train.log"),
		rules: filepath.Join(root, "rules.json"), monitor: filepath.Join(root, "monitor"), verdict: filepath.Join(root, "verdict.json")}
	r.rank = filepath.Join(r.dump, "step3", "rank1")
	copyTree(t, filepath.Join("..", "..", "internal", "repro", "testdata", "golden-dump"), r.dump)
	copyTree(t, filepath.Join("..", "..", "internal", "monitor", "testdata", "v1-forward-tp"), r.monitor)
	r.csv = filepath.Join(r.monitor, "Dec03_21-34-43-rank3-1a2b3c50", "actv_0-9.csv")
	for _, c := range []struct{ from, to string }{
		{filepath.Join("..", "..", "internal", "trainlog", "testdata", "megatron-fp16.log"), r.log},
		{filepath.Join(reportVerdicts, "markdown_bwd-sqrt-zero-L1.json"), r.verdict},
	} {
		b, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(c.to, b, 0o644)
	}
	os.WriteFile(r.rules, []byte(`[]`), 0o644)
	for _, l := range []struct{ from, to string }{
		{filepath.Join(r.rank, "dump.json"), filepath.Join(root, "dump-link.json")},
		{filepath.Join(r.rank, "stack.json"), filepath.Join(root, "stack-link.json")},
		{r.csv, filepath.Join(root, "csv-link.json")},
	} {
		if err := os.Link(l.from, l.to); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(r.log, filepath.Join(root, "log-symlink.txt")); err != nil {
		t.Fatal(err)
	}
	return r
}

// Every command that writes refuses an output that is an input, that lies
// inside the dump the input belongs to, or that another output names; and
// then nothing under the run changed.
func TestOutputGuard(t *testing.T) {
	r := newGuardRun(t)
	in := func(s string) string { return filepath.Join(r.root, s) }
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"trace -o the --log file", []string{"trace", r.dump, "--log", r.log, "-o", r.log},
			"refusing to write " + r.log + ": it is the same file as the input " + r.log},
		{"trace -o a link to the --log file, through a glob", []string{"trace", "--log", in("train*.log"), "-o", in("log-symlink.txt")},
			"it is the same file as the input " + r.log},
		{"trace -o a hard link to a dump.json", []string{"trace", r.dump, "-o", in("dump-link.json")},
			"it is the same file as the input " + filepath.Join(r.rank, "dump.json")},
		{"trace --html a hard link to a stack.json, the dump given as its dump.json", []string{"trace", filepath.Join(r.rank, "dump.json"), "--html", in("stack-link.json")},
			"it is the same file as the input " + filepath.Join(r.rank, "stack.json")},
		{"trace -o the --rules file", []string{"trace", r.dump, "--rules", r.rules, "-o", r.rules},
			"it is the same file as the input " + r.rules},
		{"trace -o a hard link to a --monitor file", []string{"trace", "--monitor", r.monitor, "-o", in("csv-link.json")},
			"it is the same file as the input " + r.csv},
		{"trace -o and --html one file", []string{"trace", r.dump, "-o", in("v.out"), "--html", in("v.out")},
			"refusing to write " + in("v.out") + ": -o and --html name the same file"},
		{"trace a rank folder, -o in the dump_path", []string{"trace", r.rank, "-o", filepath.Join(r.dump, "v.json")},
			"refusing to write " + filepath.Join(r.dump, "v.json") + ": it is inside the dump"},
		{"trace a step folder, --html beside the rank folders", []string{"trace", filepath.Join(r.dump, "step3"), "--html", filepath.Join(r.dump, "step3", "r.html")},
			"it is inside the dump"},
		{"trace a dump.json, -o in its step folder", []string{"trace", filepath.Join(r.rank, "dump.json"), "-o", filepath.Join(r.dump, "step3", "v.json")},
			"it is inside the dump"},
		{"report --html the verdict", []string{"report", r.verdict, "--html", r.verdict},
			"it is the same file as the input " + r.verdict},
		{"report --html and --markdown one file", []string{"report", r.verdict, "--html", in("r.out"), "--markdown", in("r.out")},
			"--html and --markdown name the same file"},
		{"report --markdown inside the --dump's dump", []string{"report", r.verdict, "--dump", r.rank, "--markdown", filepath.Join(r.dump, "r.md")},
			"it is inside the dump"},
		{"report --markdown a hard link to the --dump's dump.json", []string{"report", r.verdict, "--dump", r.dump, "--markdown", in("dump-link.json")},
			"it is the same file as the input " + filepath.Join(r.rank, "dump.json")},
		{"plan -o the --verdict", []string{"plan", "--verdict", r.verdict, "-o", r.verdict},
			"it is the same file as the input " + r.verdict},
		{"plan -o the --log", []string{"plan", "--log", r.log, "-o", r.log},
			"it is the same file as the input " + r.log},
		{"plan -o inside the dump of a rank folder", []string{"plan", r.rank, "-o", filepath.Join(r.dump, "step3", "config.json")},
			"it is inside the dump"},
		{"repro -o inside the dump of a rank folder", []string{"repro", r.rank, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", filepath.Join(r.dump, "case")},
			"refusing to write " + filepath.Join(r.dump, "case") + ": it is inside the dump"},
		{"export -o inside the dump of a step folder", []string{"export", filepath.Join(r.dump, "step3"), "-o", filepath.Join(r.dump, "out")},
			"it is inside the dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refused(t, r.root, tt.args, tt.msg) })
	}
}

// refused runs nanhunt with args and checks that it refused, saying msg
// on stderr and nothing on stdout, and that nothing under root changed.
func refused(t *testing.T, root string, args []string, msg string) {
	t.Helper()
	before := snapshot(t, root)
	stdout, stderr, code := runCLI(t, args...)
	if code != exitError || !strings.Contains(stderr, msg) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitError, msg)
	}
	if stdout != "" {
		t.Errorf("stdout %q", stdout)
	}
	after := snapshot(t, root)
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was written", p)
		}
	}
}

// What the guard lets through is written whole: a file that existed keeps
// its mode, a new one is 0644, and standard output still works.
func TestOutputGuardWrites(t *testing.T) {
	r := newGuardRun(t)
	old := filepath.Join(r.root, "old.json")
	os.WriteFile(old, []byte("old"), 0o600)
	os.Chmod(old, 0o600)
	page := filepath.Join(r.root, "new.html")
	if _, stderr, code := runCLI(t, "trace", r.dump, "--log", r.log, "--format", "json", "-o", old, "--html", page); code != exitAnomaly {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		path, prefix string
		mode         fs.FileMode
	}{{old, "{", 0o600}, {page, "<!DOCTYPE html>", 0o644}} {
		b, err := os.ReadFile(c.path)
		info, serr := os.Stat(c.path)
		if err != nil || serr != nil || !strings.HasPrefix(string(b), c.prefix) || info.Mode().Perm() != c.mode {
			t.Errorf("%s: %.20q, mode %v (%v %v); want %q…, mode %v", c.path, b, info.Mode().Perm(), err, serr, c.prefix, c.mode)
		}
	}
	if ents, _ := os.ReadDir(r.root); len(ents) != 11 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the run's folder holds %v: a temporary file was left", names)
	}
	if stdout, _, code := runCLI(t, "trace", r.dump, "-o", "-"); code != exitAnomaly || !strings.Contains(stdout, "nanhunt:") {
		t.Errorf("-o -: exit %d, stdout %q", code, stdout)
	}
}

// The libraries' own check, outguard.Inside (repro and export call it),
// fails closed too: a path through a link loop counts as inside.
func TestDumpInsideFailsClosed(t *testing.T) {
	root := t.TempDir()
	os.Symlink("b", filepath.Join(root, "a"))
	os.Symlink("a", filepath.Join(root, "b"))
	os.Mkdir(filepath.Join(root, "dump"), 0o755)
	tests := []struct {
		name, path, dir string
		want            bool
	}{
		{"outside", filepath.Join(root, "v.json"), filepath.Join(root, "dump"), false},
		{"inside", filepath.Join(root, "dump", "v.json"), filepath.Join(root, "dump"), true},
		{"an output through a link loop", filepath.Join(root, "a", "v.json"), filepath.Join(root, "dump"), true},
		{"a dump through a link loop", filepath.Join(root, "v.json"), filepath.Join(root, "a", "dump"), true},
	}
	for _, tt := range tests {
		if got := outguard.Inside(tt.path, tt.dir); got != tt.want {
			t.Errorf("%s: outguard.Inside(%s, %s) = %v, want %v", tt.name, tt.path, tt.dir, got, tt.want)
		}
	}
}
