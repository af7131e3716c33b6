package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/export"
)

func TestExportCommand(t *testing.T) {
	src := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	tmp := t.TempDir()
	damaged := filepath.Join(tmp, "damaged")
	if err := os.CopyFS(damaged, os.DirFS(filepath.Join(src, "step5"))); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(damaged, "rank1", "dump.json")
	if info, err := os.Stat(bad); err != nil || os.Truncate(bad, info.Size()/3) != nil {
		t.Fatal("cannot truncate the copy")
	}
	notEmpty := filepath.Join(tmp, "not-empty")
	os.MkdirAll(notEmpty, 0o755)
	os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644)

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   []string
		manifest string // the output folder, when a manifest must be there
	}{
		{"steps 4-5 ranks 1-2", []string{"export", src, "--steps", "4-5", "--ranks", "1-2", "-o", filepath.Join(tmp, "a"), "--jobs", "2"},
			exitClean, "wrote 4 Parquet files", nil, filepath.Join(tmp, "a")},
		{"format given", []string{"export", src, "--format", "parquet", "--steps", "0", "-o", filepath.Join(tmp, "b")},
			exitClean, "wrote 4 Parquet files", nil, filepath.Join(tmp, "b")},
		{"truncated dump.json", []string{"export", damaged, "-o", filepath.Join(tmp, "c")},
			exitPartial, "wrote 4 Parquet files", []string{"warning: " + bad + ": offset", "1 of 4 dump.json files were damaged"}, filepath.Join(tmp, "c")},
		{"inside the dump", []string{"export", src, "-o", filepath.Join(src, "step0", "out")},
			exitError, "", []string{"inside the dump"}, ""},
		{"non-empty output", []string{"export", src, "-o", notEmpty},
			exitError, "", []string{"not empty", "--force"}, ""},
		{"non-empty output with --force", []string{"export", src, "--steps", "7", "-o", notEmpty, "--force"},
			exitClean, "wrote 4 Parquet files", nil, ""},
		{"no -o", []string{"export", src},
			exitError, "", []string{"-o DIR is required"}, ""},
		{"csv", []string{"export", src, "--format", "csv", "--steps", "5", "-o", filepath.Join(tmp, "h")},
			exitClean, "wrote 4 CSV files", nil, filepath.Join(tmp, "h")},
		{"unknown format", []string{"export", src, "--format", "xlsx", "-o", filepath.Join(tmp, "d")},
			exitError, "", []string{`--format "xlsx": want parquet or csv`}, ""},
		{"empty format", []string{"export", src, "--format", "", "-o", filepath.Join(tmp, "d")},
			exitError, "", []string{`--format "": want parquet or csv`}, ""},
		{"bad steps", []string{"export", src, "--steps", "x", "-o", filepath.Join(tmp, "e")},
			exitError, "", []string{"--steps"}, ""},
		{"no matching step", []string{"export", src, "--steps", "99", "-o", filepath.Join(tmp, "f")},
			exitError, "", []string{"no rank folder matches"}, ""},
		{"not a dump", []string{"export", tmp + "/nothing", "-o", filepath.Join(tmp, "g")},
			exitError, "", []string{"nothing"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout %q, want %q", out, tt.stdout)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q, want %q", errOut, s)
				}
			}
			if tt.stderr == nil && errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
			if tt.manifest != "" {
				if _, err := os.Stat(filepath.Join(tt.manifest, export.ManifestName)); err != nil {
					t.Errorf("no manifest: %v", err)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(src, "step0", "out")); err == nil {
		t.Error("wrote inside the dump")
	}
}
