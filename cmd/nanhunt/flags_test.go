package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listing is nanhunt flags --json, parsed.
func listing(t *testing.T) (flagListing, string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "flags", "--json")
	if code != exitClean || stderr != "" {
		t.Fatalf("flags --json: exit %d, stderr %q", code, stderr)
	}
	var l flagListing
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("flags --json is not a listing: %v", err)
	}
	return l, stdout
}

// repoGolden compares got with the repository's file at path (from the
// repository's root), or rewrites it with -update.
func repoGolden(t *testing.T, path, got string) {
	t.Helper()
	file := filepath.Join("..", "..", path)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/nanhunt -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s is not what the binary says (go test ./cmd/nanhunt -update after reading the diff):\n--- got\n%s", path, got)
	}
}

// docs/flags.md is nanhunt flags: the one page that documents every flag.
func TestFlagsPage(t *testing.T) {
	stdout, stderr, code := runCLI(t, "flags")
	if code != exitClean || stderr != "" {
		t.Fatalf("flags: exit %d, stderr %q", code, stderr)
	}
	repoGolden(t, "docs/flags.md", stdout)
}

// python/nanhunt/_flags.py holds nanhunt flags --json as it is: the
// package builds its command lines from it.
func TestFlagsPythonModule(t *testing.T) {
	_, text := listing(t)
	module, err := pythonFlagsModule(text)
	if err != nil {
		t.Fatal(err)
	}
	repoGolden(t, "python/nanhunt/_flags.py", module)
}

// pythonFlagsModule is the Python module that holds the listing: the JSON
// text in a raw string, which must not end it early.
func pythonFlagsModule(listing string) (string, error) {
	if strings.Contains(listing, `"""`) || strings.Contains(listing, `\"""`) {
		return "", os.ErrInvalid
	}
	return `"""The flags of every nanhunt command, as ` + "``nanhunt flags --json``" + ` lists them (schema
` + flagsSchema + `): what the package builds its command lines from.

Written from the binary by ` + "``go test ./cmd/nanhunt -update``" + `: do not edit. The Go test
holds it to the binary built from the same source, tests/test_flags.py to the
binary the package runs.
"""

import json
from typing import Any, Dict

LISTING: Dict[str, Any] = json.loads(
    r"""
` + listing + `"""
)
`, nil
}

// A flag's name means one thing in every command: the same type, the same
// shorthand, repeatable or not alike; a shorthand stands for one name; -o
// is every command's output, and no other name is.
func TestOneMeaningPerFlagName(t *testing.T) {
	l, _ := listing(t)
	seen := map[string]flagEntry{}
	where := map[string]string{}
	short := map[string]string{}
	for _, c := range l.Commands {
		for _, f := range c.Flags {
			if !slices.Contains(flagTypes, f.Type) {
				t.Errorf("%s --%s: type %q, not one of %v", c.Name, f.Name, f.Type, flagTypes)
			}
			if prev, ok := seen[f.Name]; ok && (prev.Type != f.Type || prev.Shorthand != f.Shorthand || prev.Repeatable != f.Repeatable) {
				t.Errorf("--%s: %s takes %s (-%s, repeatable %v), %s %s (-%s, repeatable %v)", f.Name,
					where[f.Name], prev.Type, prev.Shorthand, prev.Repeatable, c.Name, f.Type, f.Shorthand, f.Repeatable)
			}
			seen[f.Name], where[f.Name] = f, c.Name
			if f.Shorthand != "" {
				if name, ok := short[f.Shorthand]; ok && name != f.Name {
					t.Errorf("-%s stands for --%s and --%s", f.Shorthand, name, f.Name)
				}
				short[f.Shorthand] = f.Name
			}
			if strings.HasPrefix(f.Name, "out") && f.Name != "output" {
				t.Errorf("%s --%s: an output's flag is -o (--output)", c.Name, f.Name)
			}
		}
	}
	if seen["output"].Shorthand != "o" {
		t.Errorf("--output is -%s, want -o", seen["output"].Shorthand)
	}
	// every command that writes a file or folder names it with -o
	for _, name := range []string{"trace", "summarize", "plan", "repro", "report", "export", "demo", "synth", "watch"} {
		i := slices.IndexFunc(l.Commands, func(c commandListing) bool { return c.Name == name })
		if i < 0 || !slices.ContainsFunc(l.Commands[i].Flags, func(f flagEntry) bool { return f.Name == "output" }) {
			t.Errorf("nanhunt %s has no -o", name)
		}
	}
}

// The listing holds each command's visible flags, as the help shows them,
// and nothing of the old names.
func TestFlagsListing(t *testing.T) {
	l, text := listing(t)
	if l.Schema != flagsSchema {
		t.Errorf("schema %q", l.Schema)
	}
	if bytes.Contains([]byte(text), []byte(`"help"`+":"+` "help for`)) {
		t.Errorf("the listing holds -h/--help")
	}
	names := map[string]map[string]flagEntry{}
	for _, c := range l.Commands {
		names[c.Name] = map[string]flagEntry{}
		for _, f := range c.Flags {
			names[c.Name][f.Name] = f
		}
	}
	for _, c := range []string{"help", "completion"} {
		if names[c] != nil {
			t.Errorf("cobra's %s command is listed", c)
		}
	}
	tests := []struct {
		command, flag string
		want          *flagEntry // nil: not listed
	}{
		{"watch", "output", &flagEntry{Name: "output", Shorthand: "o", Type: "string", Default: "nanhunt-watch", Help: "folder for the verdict and the HTML report of the alarm (run from inside the dump, the default is nanhunt-watch-NAME beside it)"}},
		{"watch", "out", nil},
		{"watch", "steps", nil}, // refused by watch: hidden
		{"watch", "settle", &flagEntry{Name: "settle", Type: "duration", Default: "2s", Help: "how long a dump.json must stay unchanged to count as written"}},
		{"trace", "log", &flagEntry{Name: "log", Type: "string", Repeatable: true, Help: "training log file, or a glob such as 'logs/rank*.log' (repeatable)"}},
		{"trace", "ranks", &flagEntry{Name: "ranks", Type: "ranges", Help: "only these ranks, e.g. 0,3-7"}},
		{"trace", "jobs", &flagEntry{Name: "jobs", Type: "int", Help: "files read at once (default: one per CPU)"}},
		{"trace", "strict", &flagEntry{Name: "strict", Type: "bool", Help: "report the first NaN/Inf even when the next step no longer shows it"}},
		{"synth", "world-size", &flagEntry{Name: "world-size", Type: "int", Default: "8", Help: "world size: the number of ranks of the run"}},
		{"synth", "ranks", nil},
		{"synth", "tp", nil},
		{"synth", "file-mb", &flagEntry{Name: "file-mb", Type: "float", Default: "16", Help: "target size of each dump.json in MB (0: no target, use --layers and --micro-batches)"}},
		{"plan", "dump-path", nil},
		{"plan", "config-dump-path", &flagEntry{Name: "config-dump-path", Type: "string", Default: "./nanhunt_followup", Help: "the dump_path written into the config: where msprobe writes the next dump"}},
	}
	for _, tt := range tests {
		got, ok := names[tt.command][tt.flag]
		switch {
		case tt.want == nil && ok:
			t.Errorf("%s --%s is listed: %+v", tt.command, tt.flag, got)
		case tt.want != nil && got != *tt.want:
			t.Errorf("%s --%s: %+v, want %+v", tt.command, tt.flag, got, *tt.want)
		}
	}
}

// An old name that works is the new flag, with one line on stderr; one
// that could be confused is refused naming the new flag; neither is in
// the help or offered for a typo.
func TestOldFlagNames(t *testing.T) {
	const missing = "MISSING" // a path that does not exist, each test's own
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"synth --ranks N is refused", []string{"synth", "--ranks", "8", "-o", missing}, exitError,
			"nanhunt: synth --ranks: the world size is --world-size N now; --ranks is a list of ranks in the other commands"},
		{"synth --ranks LIST is refused", []string{"synth", "--ranks", "0-7", "-o", missing}, exitError, "synth --ranks: the world size is --world-size N now"},
		{"synth --tp works", []string{"synth", "--tp", "4", "--model", "bogus", "-o", missing}, exitError,
			"nanhunt: synth --tp is deprecated and goes in the next release: use --tp-size\n"},
		{"old and new name together", []string{"synth", "--tp", "2", "--tp-size", "4", "-o", missing}, exitError, "--tp is the old name of --tp-size: give --tp-size only"},
		{"watch --out and -o together", []string{"watch", missing, "--out", "a", "-o", "b"}, exitError, "--out is the old name of -o: give -o only"},
		{"old names not offered for a typo", []string{"watch", missing, "--ou", "x"}, exitError, "(did you mean --output?)"},
		{"plan --dump-path works", []string{"plan", missing, "--dump-path", "/data/next"}, exitError,
			"nanhunt: plan --dump-path is deprecated and goes in the next release: use --config-dump-path\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "no-dump")
			args := slices.Clone(tt.args)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "MISSING", missing)
			}
			stdout, stderr, code := runCLI(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s was written", missing)
			}
		})
	}
	for _, c := range [][]string{{"watch", "out"}, {"synth", "ranks"}, {"synth", "tp"}, {"plan", "dump-path"}} {
		stdout, _, _ := runCLI(t, c[0], "--help")
		if strings.Contains(stdout, "--"+c[1]+" ") {
			t.Errorf("nanhunt %s --help shows --%s", c[0], c[1])
		}
	}
}

// watch --out still writes the alarm's files into the folder it names,
// and says once on stderr (never on stdout, which holds the events) that
// the name goes.
func TestWatchOutAlias(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	outDir := filepath.Join(t.TempDir(), "alarms")
	stdout, stderr, code := runCLI(t, "watch", dir, "--format", "jsonl", "--settle", "100ms", "--poll", "20ms", "--idle-exit", "2s",
		"--out", outDir, "--exit-on-anomaly")
	if code != exitAnomaly {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if n := strings.Count(stderr, "watch --out is deprecated"); n != 1 {
		t.Errorf("the note is on stderr %d times: %q", n, stderr)
	}
	jsonLines(t, stdout) // every line an event
	if _, err := os.Stat(filepath.Join(outDir, "verdict-step2.json")); err != nil {
		t.Errorf("--out: %v", err)
	}
}
