package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad usage exits 2 with a message on stderr and nothing on stdout, before
// anything is read; an unknown flag or command is offered the near ones.
func TestUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-dump")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // what stderr holds
		not    string // what it must not hold
	}{
		{"no arguments", nil, exitError, "Usage:\n  nanhunt [command]", ""},
		{"help", []string{"--help"}, exitClean, "", ""},
		{"unknown command", []string{"tarce"}, exitError, "unknown command \"tarce\" for \"nanhunt\"\n\nDid you mean this?\n\ttrace", ""},
		{"flag typo", []string{"trace", missing, "--lgo", "x.log"}, exitError, "unknown flag: --lgo (did you mean --log?)", ""},
		{"flag typo, a letter short", []string{"trace", missing, "--step", "1"}, exitError, "(did you mean --steps?)", ""},
		{"flag typo with =", []string{"plan", missing, "--verdcit=v.json"}, exitError, "(did you mean --verdict?)", ""},
		{"flag prefix", []string{"trace", missing, "--log-f", "json"}, exitError, "(did you mean --log-format or --log?)", ""},
		{"flag typo on report", []string{"report", "v.json", "--markdwn", "r.md"}, exitError, "(did you mean --markdown?)", ""},
		{"flag typo on export", []string{"export", missing, "--jobz", "2"}, exitError, "(did you mean --jobs?)", ""},
		{"nothing near", []string{"trace", missing, "--zzzzzz"}, exitError, "unknown flag: --zzzzzz", "did you mean"},
		{"--jobs 0", []string{"trace", missing, "--jobs", "0"}, exitError, "--jobs 0: want 1 or more", ""},
		{"--jobs negative", []string{"plan", missing, "--jobs", "-2"}, exitError, "--jobs -2: want 1 or more", ""},
		{"--jobs 0 on export", []string{"export", missing, "-o", missing + "-out", "--jobs", "0"}, exitError, "--jobs 0: want 1 or more", ""},
		{"--jobs 0 on demo", []string{"demo", "--jobs", "0"}, exitError, "--jobs 0: want 1 or more", ""},
		{"demo -o inside --keep", []string{"demo", "--keep", missing, "-o", filepath.Join(missing, "v.json")}, exitError, "it is inside the dump " + missing, ""},
		{"--jobs 1 is taken", []string{"trace", missing, "--jobs", "1"}, exitError, "no such file", "--jobs"},
		{"--steps with an empty item", []string{"trace", missing, "--steps", "1,,2"}, exitError, `--steps "1,,2": an empty item`, ""},
		{"--steps with a trailing comma", []string{"trace", missing, "--steps", "4,"}, exitError, `--steps "4,": an empty item`, ""},
		{"--steps backwards", []string{"trace", missing, "--steps", "3-1"}, exitError, `--steps: bad range "3-1"`, ""},
		{"--steps with a sign", []string{"plan", missing, "--steps", "+3"}, exitError, `"+3" is not N or N-M`, ""},
		{"--ranks of a comma", []string{"trace", missing, "--ranks", ","}, exitError, `--ranks ",": an empty item`, ""},
		{"--ranks given empty", []string{"trace", missing, "--ranks="}, exitError, "--ranks: an empty list", ""},
		{"--ranks of export", []string{"export", missing, "-o", missing + "-out", "--ranks", "0,,1"}, exitError, `--ranks "0,,1": an empty item`, ""},
		{"--steps of synth", []string{"synth", "--steps", "0,,5", "-o", missing}, exitError, `--steps "0,,5": an empty item`, ""},
		{"--format checked without a dump", []string{"trace", "--log", missing, "--format", "xml"}, exitError, `--format "xml": want text, json, markdown or skill`, ""},
		{"plan --format", []string{"plan", missing, "--format", "markdown"}, exitError, `--format "markdown": want text or json`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) || (tt.not != "" && strings.Contains(stderr, tt.not)) {
				t.Errorf("exit %d, stderr %q; want exit %d, %q and not %q", code, stderr, tt.code, tt.stderr, tt.not)
			}
			if tt.code == exitError && stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s was written", missing)
			}
		})
	}
}

func TestParseRanges(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{"4", []int{4}, ""},
		{"0,3-5", []int{0, 3, 4, 5}, ""},
		{" 0, 2 ", []int{0, 2}, ""},
		{"1,,2", nil, "an empty item"},
		{",", nil, "an empty item"},
		{"", nil, "an empty item"},
		{"3-1", nil, "N <= M"},
		{"-1", nil, "is not N or N-M"},
		{"1-", nil, "is not N or N-M"},
		{"1-2-3", nil, "is not N or N-M"},
		{"1 - 2", nil, "is not N or N-M"},
		{"x", nil, "is not N or N-M"},
		{"0-99999999", nil, "too large"},
	}
	for _, tt := range tests {
		got, err := parseRanges("--steps", tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "--steps") {
				t.Errorf("parseRanges(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("parseRanges(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		for _, n := range tt.want {
			if !got[n] {
				t.Errorf("parseRanges(%q) lacks %d", tt.in, n)
			}
		}
	}
}

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"log", "log", 0}, {"lgo", "log", 2}, {"step", "steps", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if got := levenshtein(c.a, c.b); got != c.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
