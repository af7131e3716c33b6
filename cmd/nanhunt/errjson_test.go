package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

// With --format json an unusable input still writes one JSON object to
// stdout: the verdict's schema, a null anomaly, and the error with the
// file and offset it carries. stderr says the same as without JSON.
func TestErrorJSON(t *testing.T) {
	dir := t.TempDir()
	rank := filepath.Join(dir, "dump", "step3", "rank1")
	copyTree(t, filepath.Join("..", "..", "internal", "repro", "testdata", "golden-dump", "step3", "rank1"), rank)
	whole, err := os.ReadFile(filepath.Join(rank, "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut", "dump.json")
	os.MkdirAll(filepath.Dir(cut), 0o755)
	os.WriteFile(cut, whole[:300], 0o644)
	savedCut := filepath.Join(dir, "verdict.json")
	os.WriteFile(savedCut, []byte(`{"schema": "nanhunt/verdict/v1", "anomaly": tru`), 0o644)
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`[{"op": "x",]`), 0o644)
	missing := filepath.Join(dir, "missing")
	off := func(n int64) *int64 { return &n }
	tests := []struct {
		name    string
		args    []string
		message string // what the message holds
		file    string
		offset  *int64
	}{
		{"a missing dump", []string{"trace", missing, "--format", "json"}, "no such file", missing, nil},
		{"a missing dump, skill shapes", []string{"trace", missing, "--format", "skill"}, "no such file", missing, nil},
		{"a truncated dump.json", []string{"trace", cut, "--format", "json"}, "file ends early", cut, off(300)},
		{"a bad --steps", []string{"trace", rank, "--format", "json", "--steps", "3-1"}, `--steps: bad range "3-1"`, "", nil},
		{"an explicit --jobs 0", []string{"trace", rank, "--format=json", "--jobs", "0"}, "--jobs 0", "", nil},
		{"a flag that does not parse, before --format", []string{"trace", rank, "--jobs", "many", "--format", "json"}, `invalid argument "many"`, "", nil},
		{"an unknown flag", []string{"trace", rank, "--format", "json", "--lgo", "x"}, "did you mean --log?", "", nil},
		{"a bad rules file", []string{"trace", rank, "--format", "json", "--rules", rules}, rules, rules, off(13)},
		{"a missing log", []string{"trace", "--log", missing, "--format", "json"}, "no file could be read", missing, nil},
		{"plan: a truncated saved verdict", []string{"plan", "--verdict", savedCut, "--format", "json"}, "not a JSON verdict", savedCut, off(47)},
		{"demo: a bad --ranks", []string{"demo", "--format", "json", "--ranks", ","}, "an empty item", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != exitError {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
			}
			if len(raw) != 3 || string(raw["anomaly"]) != "null" {
				t.Errorf("want schema, anomaly (null) and error: %s", stdout)
			}
			var got struct {
				Schema string `json:"schema"`
				Error  struct {
					Message string `json:"message"`
					File    string `json:"file"`
					Offset  *int64 `json:"offset"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			e := got.Error
			if got.Schema != verdict.Schema || !strings.Contains(e.Message, tt.message) || e.File != tt.file {
				t.Errorf("schema %q, message %q, file %q; want %q, %q, %q", got.Schema, e.Message, e.File, verdict.Schema, tt.message, tt.file)
			}
			if show(e.Offset) != show(tt.offset) {
				t.Errorf("offset %s, want %s", show(e.Offset), show(tt.offset))
			}
			if stderr != "nanhunt: "+e.Message+"\n" {
				t.Errorf("stderr %q is not the message %q", stderr, e.Message)
			}
		})
	}
}

func show(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// Without --format json an error writes nothing to stdout.
func TestErrorNotJSON(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"trace", missing},
		{"trace", missing, "--format", "markdown"},
		{"report", missing, "--format", "text"},
	} {
		if stdout, _, code := runCLI(t, args...); code != exitError || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
		}
	}
}

// The JSON of a truncated dump.json, as a user's script sees it.
func TestErrorJSONGolden(t *testing.T) {
	dir := t.TempDir()
	whole, err := os.ReadFile(filepath.Join("..", "..", "internal", "repro", "testdata", "golden-dump", "step3", "rank1", "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "dump.json")
	os.WriteFile(cut, whole[:300], 0o644)
	stdout, _, code := runCLI(t, "trace", cut, "--format", "json")
	if code != exitError {
		t.Fatalf("exit %d", code)
	}
	golden(t, "error-truncated.json", strings.ReplaceAll(stdout, dir, "$TMP"))
}
