package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// finishedRun writes a generated scenario, as a job that has ended.
func finishedRun(t *testing.T, scenario string) string {
	t.Helper()
	for _, sc := range synth.Scenarios() {
		if sc.Name == scenario {
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatalf("no scenario %s", scenario)
	return ""
}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	return lines
}

// The alarm: the verdict and the page in -o, the hook with its
// environment, exit 1; the JSON lines name each event.
func TestWatchAlarm(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	work := t.TempDir()
	outDir, envFile := filepath.Join(work, "alarms"), filepath.Join(work, "env")
	stdout, stderr, code := runCLI(t, "watch", dir, "--format", "jsonl", "--settle", "100ms", "--poll", "20ms", "--idle-exit", "2s",
		"-o", outDir, "--exit-on-anomaly", "--on-anomaly", "env | grep ^NANHUNT_ > "+envFile)
	if code != exitAnomaly {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	lines := jsonLines(t, stdout)
	var events []string
	var alarm map[string]any
	for _, l := range lines {
		events = append(events, l["event"].(string))
		if l["event"] == "anomaly" {
			alarm = l
		}
	}
	want := []string{"step", "suspect", "anomaly", "stopped"} // waiting lines may come between
	i := 0
	for _, e := range events {
		if i < len(want) && e == want[i] {
			i++
		}
	}
	if i < len(want) || alarm == nil {
		t.Fatalf("events %v, want %v in that order", events, want)
	}
	if alarm["op"] != "Torch.log.0.forward" || alarm["step"] != 2.0 || alarm["source"] != "dump" {
		t.Errorf("alarm %v", alarm)
	}
	for _, f := range []string{"verdict-step2.json", "report-step2.html"} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("the alarm wrote no %s: %v", f, err)
		}
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	for _, want := range []string{"NANHUNT_STEP=2", "NANHUNT_RANKS=2", "NANHUNT_OP=Torch.log.0.forward", "NANHUNT_KIND=nan",
		"NANHUNT_STAGE=forward", "NANHUNT_SOURCE=dump", "NANHUNT_VERDICT=" + filepath.Join(outDir, "verdict-step2.json")} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("the hook's environment lacks %s:\n%s", want, env)
		}
	}
}

// A skipped overflow is no alarm; a watch with --state resumes after the
// steps it checked.
func TestWatchRecoveredAndState(t *testing.T) {
	dir := finishedRun(t, "loss-scale-recovered")
	state := filepath.Join(t.TempDir(), "watch.json")
	args := []string{"watch", dir, "--settle", "100ms", "--poll", "20ms", "--idle-exit", "1s", "-o", t.TempDir(), "--state", state}
	stdout, stderr, code := runCLI(t, append(args, "--until-step", "2")...)
	if code != exitClean {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"step 0: clean (ranks 0-3)", "step 2: did not last", "stopped: --until-step reached"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	// the second watch starts after step 2
	stdout, stderr, code = runCLI(t, args...)
	if code != exitClean {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	if strings.Contains(stdout, "step 0:") || strings.Contains(stdout, "step 2:") || !strings.Contains(stdout, "step 4: clean") || !strings.Contains(stdout, "step 6: clean") {
		t.Errorf("the resumed watch printed\n%s", stdout)
	}
}

// Nothing is written inside the dump, and a dump_path must be a folder.
func TestWatchRefusals(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	for _, tt := range []struct {
		name string
		args []string
		err  string
	}{
		{"out inside the dump", []string{"watch", dir, "-o", filepath.Join(dir, "alarms")}, "inside"},
		{"a file", []string{"watch", filepath.Join(dir, "step1", "rank0", "dump.json")}, "not a folder"},
		{"steps", []string{"watch", dir, "--steps", "1-2"}, "--until-step"},
		{"bad format", []string{"watch", dir, "--format", "json"}, "--format"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != exitError || !strings.Contains(stderr, tt.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.err)
			}
		})
	}
}

// The text a user reads, held to a golden (the README shows it): a run
// that has ended, followed with a short settle time.
func TestWatchTextGolden(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	outDir := filepath.Join(t.TempDir(), "alarms")
	stdout, stderr, code := runCLI(t, "watch", dir, "--settle", "100ms", "--poll", "20ms", "-o", outDir, "--exit-on-anomaly")
	if code != exitAnomaly {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	golden(t, "watch-alarm.txt", strings.NewReplacer(outDir, "alarms", dir, "dump").Replace(stdout))
}

// --prune-clean-tensors keeps at least one clean step, and logs outside
// the dump.
func TestWatchPruneFlag(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	tensors := filepath.Join(dir, "step1", "rank0", "dump_tensor_data")
	if err := os.MkdirAll(tensors, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tensors, "x.pt"), []byte("t"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, stderr, code := runCLI(t, "watch", dir, "--prune-clean-tensors", "0", "-o", out); code != exitError || !strings.Contains(stderr, "at least") {
		t.Errorf("--prune-clean-tensors 0: exit %d, %s", code, stderr)
	}
	// one clean step (1) and Keep 1: nothing to delete yet
	if _, stderr, code := runCLI(t, "watch", dir, "--prune-clean-tensors", "1", "-o", out, "--settle", "50ms", "--poll", "20ms", "--exit-on-anomaly"); code != exitAnomaly {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tensors, "x.pt")); err != nil {
		t.Errorf("the last clean step's tensors were deleted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "pruned.log")); err != nil {
		t.Errorf("no pruned.log: %v", err)
	}
}

// Run from inside the dump ("cd dump_path && nanhunt watch ."), the
// default -o folder goes beside the dump, and the first line says where.
func TestWatchDefaultOutFromInsideTheDump(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	t.Chdir(filepath.Join(dir, "step1"))
	before := treeOf(t, dir)
	_, stderr, code := runCLI(t, "watch", "..", "--settle", "100ms", "--poll", "20ms", "--exit-on-anomaly")
	if code != exitAnomaly {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	outDir := filepath.Join(filepath.Dir(dir), "nanhunt-watch-dump")
	if _, err := os.Stat(filepath.Join(outDir, "verdict-step2.json")); err != nil {
		t.Errorf("the alarm's verdict is not beside the dump: %v", err)
	}
	if first, _, _ := strings.Cut(stderr, "\n"); !strings.Contains(first, "the alarm's files go to "+outDir) {
		t.Errorf("the first line of stderr does not say where the files go: %q", first)
	}
	if after := treeOf(t, dir); after != before {
		t.Errorf("the watch wrote inside the dump:\n%s\nwas\n%s", after, before)
	}
}

// treeOf lists the paths under dir, one a line.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(paths, "\n")
}
