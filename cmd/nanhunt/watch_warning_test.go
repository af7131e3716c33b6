package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A followed log that cannot be read is said at once, in text and in
// jsonl, and named in the alarm's verdict; the alarm stands (exit 1).
func TestWatchLogReadErrorIsReported(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	work := t.TempDir()
	log := filepath.Join(work, "train.log")
	if err := os.WriteFile(log, []byte("no training log line here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			outDir := filepath.Join(work, format)
			stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "--log", log, "--out", outDir, "--exit-on-anomaly", "--format", format}, fastWatch...)...)
			if code != exitAnomaly {
				t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
			}
			said := strings.Contains(stdout, "warning: the log could not be read: trainlog: no training-log lines recognised in "+log)
			if format == "jsonl" {
				said = false
				for _, l := range jsonLines(t, stdout) {
					said = said || l["event"] == "warning" && l["source"] == "log" && strings.Contains(l["message"].(string), "no training-log lines recognised")
				}
			}
			if !said {
				t.Errorf("the read error is not said:\n%s", stdout)
			}
			files, _ := filepath.Glob(filepath.Join(outDir, "verdict-step*.json"))
			if len(files) != 1 {
				t.Fatalf("verdicts written: %v", files)
			}
			v := readVerdictFile(t, files[0])
			if w := v["warnings"]; !strings.Contains(fmt.Sprint(w), "the followed log could not be read") {
				t.Errorf("the verdict's warnings %v", w)
			}
		})
	}
}
