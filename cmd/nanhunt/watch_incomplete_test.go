package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fastWatch are the timings of a watch of a finished run in these tests.
var fastWatch = []string{"--settle", "50ms", "--poll", "20ms", "--rank-timeout", "300ms", "--idle-exit", "1s"}

// crashedRun writes a generated scenario, then removes paths from it (a
// rank that crashed) and writes garbage over others.
func crashedRun(t *testing.T, scenario string, remove, garbage []string) string {
	t.Helper()
	dir := finishedRun(t, scenario)
	for _, p := range remove {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range garbage {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("\x00 not a dump\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A watch that ends without an anomaly but with rank-steps it could not
// read whole says so at the step and at the end, and exits 3.
func TestWatchIncompleteExit3(t *testing.T) {
	var garbage []string
	for r := range 4 {
		garbage = append(garbage, fmt.Sprintf("step2/rank%d/dump.json", r))
	}
	for _, tt := range []struct {
		name            string
		remove, garbage []string
		args            []string
		line            string
	}{
		{"rank 3 never wrote step 2", []string{"step3", "step2/rank3"}, nil, nil,
			"step 2 incomplete: rank 3 never wrote it (ranks 0-2 clean)"},
		{"rank 3 never wrote step 2, --until-step 2", []string{"step3", "step2/rank3"}, nil, []string{"--until-step", "2"},
			"step 2 incomplete: rank 3 never wrote it (ranks 0-2 clean)"},
		{"rank 1's dump.json of step 2 missing, step 3 written", []string{"step2/rank1/dump.json"}, nil, nil,
			"step 2 incomplete: rank 1 could not be read (ranks 0,2,3 clean)"},
		{"every file of step 2 garbage", nil, garbage, nil,
			"step 2: could not be read (ranks 0-3: unreadable)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := crashedRun(t, "legit-masks", tt.remove, tt.garbage)
			args := append(append([]string{"watch", dir, "-o", t.TempDir()}, fastWatch...), tt.args...)
			stdout, stderr, code := runCLI(t, args...)
			if code != exitIncomplete {
				t.Fatalf("exit %d, want 3; stderr %s\n%s", code, stderr, stdout)
			}
			lines := strings.Split(stdout, "\n")
			if !containsLine(lines, "step 1: clean (ranks 0-3)") || !containsLine(lines, tt.line) {
				t.Errorf("no line %q in\n%s", tt.line, stdout)
			}
			if !strings.Contains(stdout, "could not be read whole: not a clean run (exit status 3)") || strings.Contains(stdout, "step 2: clean") {
				t.Errorf("the end does not say the run is incomplete:\n%s", stdout)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// In jsonl, step events carry complete and the unread rank-steps, and the
// stopped event those of the whole watch.
func TestWatchIncompleteJSONL(t *testing.T) {
	dir := crashedRun(t, "legit-masks", []string{"step3", "step2/rank3"}, nil)
	stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", t.TempDir(), "--format", "jsonl"}, fastWatch...)...)
	if code != exitIncomplete {
		t.Fatalf("exit %d, want 3; stderr %s", code, stderr)
	}
	never := []any{map[string]any{"step": 2.0, "ranks": []any{3.0}, "reason": "never finished"}}
	var step1, step2, stopped map[string]any
	for _, l := range jsonLines(t, stdout) {
		switch {
		case l["event"] == "step" && l["step"] == 1.0:
			step1 = l
		case l["event"] == "step" && l["step"] == 2.0:
			step2 = l
		case l["event"] == "stopped":
			stopped = l
		}
	}
	if step1 == nil || step1["complete"] != true || step1["unread"] != nil {
		t.Errorf("step 1: %v", step1)
	}
	if step2 == nil || step2["status"] != "incomplete" || step2["complete"] != false || step2["ranks"] != "0-2" || !sameJSON(step2["unread"], never) {
		t.Errorf("step 2: %v", step2)
	}
	if stopped == nil || stopped["complete"] != false || !sameJSON(stopped["unread"], never) {
		t.Errorf("stopped: %v", stopped)
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// An anomaly at a step some rank never finished raises the alarm (exit
// 1), and the verdict names the rank.
func TestWatchAnomalyWithUnfinishedRank(t *testing.T) {
	dir := crashedRun(t, "log-negative", []string{"step3", "step2/rank3"}, nil)
	outDir := filepath.Join(t.TempDir(), "alarms")
	stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", outDir, "--exit-on-anomaly", "--format", "jsonl"}, fastWatch...)...)
	if code != exitAnomaly {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, stderr, stdout)
	}
	var alarm map[string]any
	for _, l := range jsonLines(t, stdout) {
		if l["event"] == "anomaly" {
			alarm = l
		}
	}
	if alarm == nil || alarm["op"] != "Torch.log.0.forward" || alarm["complete"] != false {
		t.Fatalf("alarm %v", alarm)
	}
	v := readVerdictFile(t, filepath.Join(outDir, "verdict-step2.json"))
	o := v["origin"].(map[string]any)
	if o["confidence"] != "medium" || !strings.Contains(fmt.Sprint(o["reasons"]), "rank 3 never finished writing step 2") {
		t.Errorf("origin %v", o)
	}
	if v["complete"] != false || !strings.Contains(fmt.Sprint(v["unread"]), "never finished") {
		t.Errorf("complete %v unread %v", v["complete"], v["unread"])
	}
}

func readVerdictFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A NaN that only the followed log shows raises the alarm: exit 1, the
// log named as the source, where the dump stops, a verdict without origin
// that holds the log's evidence, the hook with NANHUNT_SOURCE=log.
func TestWatchLogAloneRaisesTheAlarm(t *testing.T) {
	dir := crashedRun(t, "log-negative", []string{"step2", "step3"}, nil)
	work := t.TempDir()
	log, envFile, outDir := filepath.Join(work, "train.jsonl"), filepath.Join(work, "env"), filepath.Join(work, "alarms")
	if err := os.WriteFile(log, []byte("{\"step\": 0, \"loss\": 2.5}\n{\"step\": 1, \"loss\": 2.4}\n{\"step\": 2, \"loss\": NaN}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := append([]string{"watch", dir, "--log", log, "-o", outDir, "--exit-on-anomaly", "--on-anomaly", "env | grep ^NANHUNT_ > " + envFile}, fastWatch...)
	stdout, stderr, code := runCLI(t, base...)
	if code != exitAnomaly {
		t.Fatalf("exit %d, want 1; stderr %s\n%s", code, stderr, stdout)
	}
	want := "step 2: ANOMALY, first seen by the log: the log shows NaN at step 2; the dump stops at step 1: dump step 2"
	if !containsLine(strings.Split(stdout, "\n"), want) {
		t.Errorf("no line %q in\n%s", want, stdout)
	}
	v := readVerdictFile(t, filepath.Join(outDir, "verdict-step2.json"))
	if v["anomaly"] != true || v["origin"] != nil || v["evidence"] == nil {
		t.Errorf("verdict anomaly %v origin %v evidence %v", v["anomaly"], v["origin"], v["evidence"])
	}
	if steps := fmt.Sprint(v["next_steps"]); !strings.Contains(steps, "The log shows NaN at step 2; the dump stops at step 1: dump step 2.") {
		t.Errorf("next steps %s", steps)
	}
	env, err := os.ReadFile(envFile)
	if err != nil || !strings.Contains(string(env), "NANHUNT_SOURCE=log\n") || !strings.Contains(string(env), "NANHUNT_STEP=2\n") {
		t.Errorf("the hook's environment: %s (%v)", env, err)
	}

	stdout, stderr, code = runCLI(t, append(base, "--format", "jsonl")...)
	if code != exitAnomaly {
		t.Fatalf("jsonl: exit %d, want 1; stderr %s", code, stderr)
	}
	var alarm map[string]any
	for _, l := range jsonLines(t, stdout) {
		if l["event"] == "anomaly" {
			alarm = l
		}
	}
	if alarm == nil || alarm["source"] != "log" || alarm["kind"] != "nan" || alarm["last_dump_step"] != 1.0 ||
		alarm["message"] != "the log shows NaN at step 2; the dump stops at step 1: dump step 2" {
		t.Errorf("alarm %v", alarm)
	}
}

// --rank-timeout must not be negative; its default is said in the help.
func TestWatchRankTimeoutFlag(t *testing.T) {
	dir := finishedRun(t, "log-negative")
	if _, stderr, code := runCLI(t, "watch", dir, "--rank-timeout", "-1s", "-o", t.TempDir()); code != exitError || !strings.Contains(stderr, "--rank-timeout") {
		t.Errorf("--rank-timeout -1s: exit %d, %s", code, stderr)
	}
	stdout, _, _ := runCLI(t, "watch", "--help")
	for _, want := range []string{"--rank-timeout duration", "(default 4 × --settle)", "3 stopped without an anomaly but some"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the help lacks %q", want)
		}
	}
}
