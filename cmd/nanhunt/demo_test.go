package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The demo exits 1 (its run has an anomaly), deletes its run unless --keep
// names a folder, and with --html writes the report of its verdict.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "demo.html")
	keep := filepath.Join(dir, "run")
	stdout, stderr, code := runCLI(t, "demo", "--format", "json", "--html", report, "--keep", keep)
	if code != exitAnomaly {
		t.Fatalf("exit %d, want %d (the demo run has an anomaly); stderr %q", code, exitAnomaly, stderr)
	}
	if !strings.Contains(stdout, `"anomaly": true`) {
		t.Errorf("the JSON verdict on stdout has no anomaly: %.300s", stdout)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("--html wrote no report: %v", err)
	}
	for _, want := range []string{"<html", "step 6"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(keep, "step6")); err != nil {
		t.Errorf("--keep %s: the run is not there: %v", keep, err)
	}
	// without --keep the run goes when the demo ends: nothing is left in TMPDIR
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if _, stderr, code := runCLI(t, "demo", "--format", "json"); code != exitAnomaly {
		t.Fatalf("exit %d without --keep; stderr %q", code, stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %d entries in TMPDIR (%s...)", len(left), left[0].Name())
	}
}

// The long help says what the commands do by default.
func TestHelpSaysTheDefaults(t *testing.T) {
	tests := []struct {
		command string
		want    []string
	}{
		{"plan", []string{"By default (any-step) on every step and every rank", "--mode same-step"}},
		{"demo", []string{"--keep DIR", "deleted when the demo ends", "exits 1", "--html FILE"}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.command, "--help")
			help := stdout + stderr
			if code != exitClean {
				t.Fatalf("exit %d", code)
			}
			for _, want := range tt.want {
				if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
					t.Errorf("%s --help lacks %q:\n%s", tt.command, want, help)
				}
			}
		})
	}
}
