package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/msprobe"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func fixtures(t *testing.T) string { return fixturedir.Dir(t) }

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/name, or rewrites it with -update.
// The fixtures' location is written as $FIXTURES.
func golden(t *testing.T, name, got string) {
	t.Helper()
	if root, err := fixturedir.Root(); err == nil {
		got = strings.ReplaceAll(got, root, "$FIXTURES")
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestTraceGolden(t *testing.T) {
	gen := filepath.Join(fixtures(t), "msprobe-generated")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"bwd-sqrt-zero-L1.txt", []string{"trace", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1")}, exitAnomaly},
		{"fwd-log-neg-mix.txt", []string{"trace", filepath.Join(gen, "fwd-log-neg-rank2-step5", "mix")}, exitAnomaly},
		{"bwd-sqrt-zero-L1-too-late.txt", []string{"trace", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1"), "--steps", "6-7"}, exitAnomaly},
		{"bwd-sqrt-zero-L1.json", []string{"trace", "--format", "json", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1")}, exitAnomaly},
		{"resnet-clean.txt", []string{"trace", filepath.Join(fixtures(t), "msprobe-real", "gpu-resnet50-mix-2steps")}, exitClean},
		{"plan-bwd-sqrt-zero-L1.txt", []string{"plan", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1")}, exitAnomaly},
		{"plan-too-late.txt", []string{"plan", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1"), "--steps", "6-7", "--config-dump-path", "/data/followup"}, exitAnomaly},
		{"plan-resnet-clean.txt", []string{"plan", filepath.Join(fixtures(t), "msprobe-real", "gpu-resnet50-mix-2steps")}, exitClean},
		{"fwd-log-neg-L1.md", []string{"trace", "--format", "markdown", filepath.Join(gen, "fwd-log-neg-rank2-step5", "L1")}, exitAnomaly},
		{"evidence-megatron-skipped.txt", []string{"trace", "--log", filepath.Join("..", "..", "internal", "trainlog", "testdata", "megatron-fp16.log")}, exitAnomaly},
		{"evidence-deepspeed.txt", []string{"trace", "--log", filepath.Join("..", "..", "internal", "trainlog", "testdata", "deepspeed.log")}, exitAnomaly},
		{"evidence-per-rank-logs.txt", []string{"trace", "--log", filepath.Join("..", "..", "internal", "trainlog", "testdata", "per-rank", "rank*.log")}, exitAnomaly},
		{"evidence-monitor-tp.txt", []string{"trace", "--monitor", filepath.Join("..", "..", "internal", "monitor", "testdata", "v1-forward-tp"), "--tp-size", "2"}, exitAnomaly},
		{"evidence-log-only.txt", []string{"trace", "--log", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "train-log", "rank*.json"), "--log-format", "generic"}, exitAnomaly},
		{"evidence-log-and-dump.txt", []string{"trace", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "L1"), "--log", filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "train-log", "rank*.json")}, exitAnomaly},
		{"evidence-log-and-dump.json", []string{"trace", "--format", "json", filepath.Join(gen, "fwd-log-neg-rank2-step5", "mix"), "--log", filepath.Join(gen, "fwd-log-neg-rank2-step5", "train-log", "rank*.json")}, exitAnomaly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.args...)
			if code != tt.code || errOut != "" {
				t.Fatalf("exit %d (want %d), stderr %q", code, tt.code, errOut)
			}
			golden(t, tt.name, out)
		})
	}
}

func TestTraceJSONSchema(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	out, _, code := runCLI(t, "trace", dir, "--format", "json", "--ranks", "0-3", "--steps", "4-6")
	if code != exitAnomaly {
		t.Fatalf("exit %d", code)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"schema", "anomaly", "origin", "first_nan", "carrier", "candidates", "suppressed", "warnings", "steps", "plan"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON verdict lacks %q", key)
		}
	}
	var v verdict.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != "nanhunt/verdict/v1" || v.Origin.Op != "Torch.log.0.forward" || v.FirstNaN != nil || v.Carrier.Op != "Distributed.all_reduce.0.forward" {
		t.Errorf("verdict = %+v", v)
	}
	// step 6 is read only to see that step 5's anomaly lasts
	if len(v.Scanned.Steps) != 2 || v.Scanned.Steps[0] != 4 || v.Scanned.CheckedNext == nil || *v.Scanned.CheckedNext != 6 {
		t.Errorf("--steps 4-6 read steps %v, checked %v", v.Scanned.Steps, v.Scanned.CheckedNext)
	}
}

func TestExitStatusAndErrors(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no such path", []string{"trace", "/nonexistent/dump"}, exitError, "no such file"},
		{"not a dump", []string{"trace", t.TempDir()}, exitError, "no msprobe dump found"},
		{"bad steps", []string{"trace", dir, "--steps", "x"}, exitError, "--steps"},
		{"no matching ranks", []string{"trace", dir, "--ranks", "9"}, exitError, "no rank folder matches"},
		{"bad format", []string{"trace", dir, "--format", "xml"}, exitError, "want text, json, markdown or skill"},
		{"output inside the dump", []string{"trace", dir, "-o", filepath.Join(dir, "step0", "verdict.json")}, exitError, "inside the dump"},
		{"nothing to read", []string{"trace"}, exitError, "give a dump folder, --log FILE or --monitor DIR"},
		{"plan: nothing to read", []string{"plan"}, exitError, "nothing to read"},
		{"plan: bad verdict", []string{"plan", "--verdict", filepath.Join(dir, "step0", "rank0", "stack.json")}, exitError, "not a nanhunt verdict"},
		{"clean steps only", []string{"trace", dir, "--steps", "0-4"}, exitClean, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, errOut, tt.err)
			}
		})
	}
}

func TestOutputFile(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	out := filepath.Join(t.TempDir(), "verdict.json")
	stdout, _, code := runCLI(t, "trace", dir, "--format", "json", "-o", out)
	if code != exitAnomaly || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte(`"schema": "nanhunt/verdict/v1"`)) {
		t.Errorf("verdict file: %v %.80s", err, data)
	}
}

func TestRulesFile(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "L1")
	rules := filepath.Join(t.TempDir(), "rules.json")
	// A (wrong) rule that declares log's NaN legitimate: the origin moves
	// on, and the exclusion is listed with its reason.
	os.WriteFile(rules, []byte(`[{"op": "Torch.log", "side": "output", "values": "nan", "reason": "our log is allowed to make NaN"}]`), 0o644)
	out, errOut, code := runCLI(t, "trace", dir, "--rules", rules, "--format", "json")
	if code != exitAnomaly {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v verdict.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Origin.Op == "Torch.log.0.forward" {
		t.Errorf("the rule did not exclude Torch.log")
	}
	found := false
	for _, s := range v.Suppressed {
		if s.Op == "Torch.log" && s.Reason == "our log is allowed to make NaN" && s.WouldBeOrigin {
			found = true
		}
	}
	if !found {
		t.Errorf("suppressed list lacks the user rule: %+v", v.Suppressed)
	}
	os.WriteFile(rules, []byte(`[{"op": "x", "side": "sideways", "values": "nan"}]`), 0o644)
	if _, errOut, code := runCLI(t, "trace", dir, "--rules", rules); code != exitError || !strings.Contains(errOut, "side") {
		t.Errorf("a bad rule: exit %d, %q", code, errOut)
	}
}

func TestProgressLine(t *testing.T) {
	line := progressLine(nanhunt.Progress{Step: 5, StepsDone: 5, Steps: 8, FilesDone: 20, Files: 32, BytesRead: 3 << 30, Bytes: 6 << 30, Elapsed: 3e9})
	for _, want := range []string{"step 5", "5/8 steps", "20/32 files", "3.0 GiB of 6.0 GiB", "1.0 GiB/s", "at most 3s left"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if progressTo(&bytes.Buffer{}) != nil {
		t.Error("progress on something that is not a terminal")
	}
}

// A plan from a saved verdict is the plan from the dump.
func TestPlanFromSavedVerdict(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "mix")
	saved := filepath.Join(t.TempDir(), "verdict.json")
	if _, _, code := runCLI(t, "trace", dir, "--format", "json", "-o", saved); code != exitAnomaly {
		t.Fatalf("trace exit %d", code)
	}
	fromDump, _, code1 := runCLI(t, "plan", dir, "--format", "json")
	fromVerdict, _, code2 := runCLI(t, "plan", "--verdict", saved, "--format", "json")
	if code1 != exitAnomaly || code2 != exitAnomaly || fromDump != fromVerdict || !strings.Contains(fromDump, `"task":"tensor"`) && !strings.Contains(fromDump, `"task": "tensor"`) {
		t.Errorf("exit %d/%d, plan from the dump:\n%s\nfrom the saved verdict:\n%s", code1, code2, fromDump, fromVerdict)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	if _, _, code := runCLI(t, "plan", "--verdict", saved, "-o", cfg); code != exitAnomaly {
		t.Fatalf("plan -o exit %d", code)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := msprobe.Validate(data); err != nil {
		t.Errorf("written config: %v\n%s", err, data)
	}
}

// A generated run with its Megatron log and monitor output, traced with
// all three: the evidence agrees with the dump.
func TestSynthSidecarsThenTrace(t *testing.T) {
	root := t.TempDir()
	dump, logs, mon := filepath.Join(root, "dump"), filepath.Join(root, "logs"), filepath.Join(root, "monitor")
	if _, errOut, code := runCLI(t, "synth", "--scenario", "sqrt-zero-backward", "-o", dump, "--log-dir", logs, "--monitor-dir", mon, "--monitor-ops", "min,max,norm,nans"); code != exitClean {
		t.Fatalf("synth exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "trace", dump, "--log", filepath.Join(logs, "*.log"), "--monitor", mon)
	if code != exitAnomaly || errOut != "" {
		t.Fatalf("trace exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "step = iteration - 1, default for megatron") || strings.Contains(out, "differs:") || strings.Count(out, "agrees:") < 4 {
		t.Errorf("evidence section:\n%s", out)
	}
	// without the dump: the plan dumps the step the evidence points at
	out, _, code = runCLI(t, "trace", "--log", filepath.Join(logs, "train.log"), "--monitor", mon, "--format", "json")
	if code != exitAnomaly || !strings.Contains(out, `"task": "statistics"`) && !strings.Contains(out, `"task":"statistics"`) {
		t.Errorf("exit %d, evidence-only verdict:\n%s", code, out)
	}
}
