package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// aheadLine is a warning line of the text output: its step and text.
var aheadLine = regexp.MustCompile(`(?m)^step (\d+): heading for overflow: (\S+ \S+ \S+) `)

// A run that climbs to a float16 overflow: a line per call, tensor and
// statistic at the first step it qualifies (the truth's one by step 12,
// two steps before the Inf of step 14; every one the offline trace gives),
// in text and jsonl; the exit status is the alarm's.
func TestWatchWarnsAhead(t *testing.T) {
	dir := finishedRun(t, "sharp-gradient-fp16")
	const due = "Distributed.all_reduce.28.forward output.0 max"
	out, _, _ := runCLI(t, "trace", dir, "--format", "json")
	var v struct {
		Ahead []struct{ Op, Tensor, Stat string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Ahead) == 0 {
		t.Fatalf("the offline trace: %v, %d warnings", err, len(v.Ahead))
	}
	var offline []string
	for _, a := range v.Ahead {
		offline = append(offline, a.Op+" "+a.Tensor+" "+a.Stat)
	}
	for _, format := range []string{"text", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", filepath.Join(t.TempDir(), "alarms"),
				"--exit-on-anomaly", "--format", format}, fastWatch...)...)
			if code != exitAnomaly {
				t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
			}
			steps := map[string]string{} // call tensor stat -> step
			if format == "text" {
				for _, m := range aheadLine.FindAllStringSubmatch(stdout, -1) {
					if _, ok := steps[m[2]]; ok {
						t.Errorf("%s warned twice", m[2])
					}
					steps[m[2]] = m[1]
				}
			} else {
				for _, l := range jsonLines(t, stdout) {
					if l["event"] != "warning" {
						continue
					}
					a, _ := l["ahead"].(map[string]any)
					key := strings.Join([]string{str(a["op"]), str(a["tensor"]), str(a["stat"])}, " ")
					if _, ok := steps[key]; ok || a["step"] != l["step"] || l["source"] != "dump" || l["message"] != a["text"] {
						t.Errorf("warning event %v", l)
					}
					steps[key] = jsonNumber(l["step"])
				}
			}
			if at := steps[due]; at != "11" && at != "12" {
				t.Errorf("%s warned at step %q, due by 12; warnings %v\n%s", due, at, steps, stdout)
			}
			for _, key := range offline {
				if _, ok := steps[key]; !ok {
					t.Errorf("%s: the offline trace warns of it, the watch did not (%v)", key, steps)
				}
			}
		})
	}
}

func str(v any) string { s, _ := v.(string); return s }

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// --on-warning runs once per warning with the warning in its environment;
// a hook that fails is a warning on stderr, and changes no exit status
// (a watch stopped before the overflow exits 0).
func TestWatchWarningHook(t *testing.T) {
	dir := finishedRun(t, "sharp-gradient-fp16")
	work := t.TempDir()
	envFile := filepath.Join(work, "env")
	hook := "{ env | grep ^NANHUNT_ | sort; echo --; } >> " + envFile + "; exit 3"
	stdout, stderr, code := runCLI(t, append([]string{"watch", dir, "-o", filepath.Join(work, "alarms"), "--format", "jsonl",
		"--until-step", "13", "--on-warning", hook}, fastWatch...)...)
	if code != exitClean {
		t.Fatalf("exit %d, want 0 (warnings and a failed hook change no exit status); stderr %s", code, stderr)
	}
	var events []map[string]any
	for _, l := range jsonLines(t, stdout) {
		if l["event"] == "warning" {
			events = append(events, l)
		}
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	blocks := strings.Split(strings.TrimSuffix(string(b), "--\n"), "--\n")
	if len(events) == 0 || len(blocks) != len(events) {
		t.Fatalf("%d hook runs for %d warnings:\n%s", len(blocks), len(events), b)
	}
	for i, e := range events {
		a := e["ahead"].(map[string]any)
		for _, want := range []string{"NANHUNT_STEP=" + jsonNumber(e["step"]), "NANHUNT_OP=" + str(a["op"]),
			"NANHUNT_TENSOR=" + str(a["tensor"]), "NANHUNT_STAT=" + str(a["stat"]), "NANHUNT_DTYPE=torch.float16",
			"NANHUNT_LIMIT=65504", "NANHUNT_RANKS=0-3", "NANHUNT_SOURCE=dump", "NANHUNT_DUMP=" + dir,
			"NANHUNT_TEXT=" + str(a["text"])} {
			if !strings.Contains(blocks[i], want+"\n") {
				t.Errorf("hook run %d lacks %s:\n%s", i, want, blocks[i])
			}
		}
		if !regexp.MustCompile(`NANHUNT_STEPS_LEFT=\d+\.\d\d\n`).MatchString(blocks[i]) {
			t.Errorf("hook run %d: no NANHUNT_STEPS_LEFT:\n%s", i, blocks[i])
		}
	}
	if n := strings.Count(stderr, "nanhunt: warning: --on-warning"); n != len(events) {
		t.Errorf("%d failures named on stderr, want %d:\n%s", n, len(events), stderr)
	}
}

// Clean runs that rise towards nothing print no warning and exit 0.
func TestWatchCleanRunNoWarning(t *testing.T) {
	for _, scenario := range []string{"warmup-spike", "half-traps"} {
		t.Run(scenario, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"watch", finishedRun(t, scenario), "-o", filepath.Join(t.TempDir(), "alarms"),
				"--on-warning", "echo ran >&2"}, fastWatch...)...)
			if code != exitClean || strings.Contains(stdout, "heading for overflow") || strings.Contains(stderr, "ran") {
				t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// The names in the hook's environment come from the dump: they are
// written as the text report prints them.
func TestWarningEnvEscapes(t *testing.T) {
	a := verdict.Ahead{Source: "dump", Op: "Torch.exp\x1b[2J.0.forward", Tensor: "output.0\n", Stat: "max", Ranks: []int{0, 2, 3},
		Limit: 11.090354888959125, StepsLeft: 0.5, Text: "Torch.exp\x1b[2J.0.forward output.0"}
	env := strings.Join(warningEnv(watch.Event{Step: 7, Ahead: &a}, "/d"), "|")
	for _, want := range []string{"NANHUNT_STEP=7", `NANHUNT_OP=Torch.exp\x1b[2J.0.forward`, `NANHUNT_TENSOR=output.0\n`,
		"NANHUNT_RANKS=0,2,3", "NANHUNT_LIMIT=11.090354888959125", "NANHUNT_STEPS_LEFT=0.50", `NANHUNT_TEXT=Torch.exp\x1b[2J.0.forward output.0|`} {
		if !strings.Contains(env, want) {
			t.Errorf("environment %q lacks %q", env, want)
		}
	}
}
