package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rank whose folders are missing from every step is unseen, unless the
// world size says the job has it: then it is unread at every step, and
// the trace and the watch end with exit status 3, not 0.
func TestWorldSizeExpectsEveryRank(t *testing.T) {
	dir := finishedRun(t, "legit-masks") // clean, ranks 0-3, steps 1-3
	for _, s := range []string{"step1", "step2", "step3"} {
		if err := os.RemoveAll(filepath.Join(dir, s, "rank3")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"trace, ranks the dump shows", []string{"trace", dir}, exitClean, "no NaN or Inf"},
		{"trace, world size", []string{"trace", dir, "--world-size", "4"}, exitIncomplete, "rank 3"},
		{"trace, a selection within it", []string{"trace", dir, "--world-size", "4", "--ranks", "0-2"}, exitClean, "no NaN or Inf"},
		{"watch, world size", []string{"watch", dir, "--world-size", "4", "--settle", "50ms", "--poll", "20ms",
			"--rank-timeout", "200ms", "--idle-exit", "500ms", "-o", filepath.Join(t.TempDir(), "out")}, exitIncomplete, "rank 3"},
		{"zero", []string{"trace", dir, "--world-size", "0"}, exitError, ""},
		{"past the bound", []string{"trace", dir, "--world-size", "2000000"}, exitError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.want) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, tc.code, stdout, stderr)
			}
		})
	}
}
