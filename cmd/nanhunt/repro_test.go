package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/repro"
)

// reproCLI runs nanhunt with the repro command.
func reproCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLI(t, args...)
}

func TestReproCommand(t *testing.T) {
	golden := filepath.Join("..", "..", "internal", "repro", "testdata", "golden-dump")
	statsOnly := filepath.Join("..", "..", "internal", "repro", "testdata", "statistics-only")
	tmp := t.TempDir()
	notEmpty := filepath.Join(tmp, "not-empty")
	os.MkdirAll(notEmpty, 0o755)
	os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
		files  string // the case folder, when it must hold a case
	}{
		{"backward", []string{"repro", golden, "--op", "Torch.sqrt.0.backward", "--step", "3", "--rank", "1", "-o", filepath.Join(tmp, "a")}, exitClean,
			[]string{"wrote the case of Torch.sqrt.0.backward, step 3, rank 1 to " + filepath.Join(tmp, "a") + ": 2 tensor files, case.json, repro.py",
				"run it: python3 " + filepath.Join(tmp, "a", "repro.py")}, nil, filepath.Join(tmp, "a")},
		{"forward without direction, notes", []string{"repro", golden, "--op", "Tensor.to.0", "--step", "3", "--rank", "1", "-o", filepath.Join(tmp, "b"), "--device", "cuda"}, exitClean,
			[]string{"wrote the case of Tensor.to.0.forward"}, []string{"nanhunt: note: input_args.1: msprobe recorded {}", "nanhunt: note: input_kwargs.device"}, filepath.Join(tmp, "b")},
		{"distributed", []string{"repro", golden, "--op", "Distributed.all_reduce.1.forward", "--step", "3", "--rank", "1", "-o", filepath.Join(tmp, "c")}, exitClean,
			[]string{"Distributed.all_reduce is a torch.distributed call: it cannot be re-run alone"},
			[]string{"note: input_kwargs.group: a process group; None (the default group) stands in for it"}, filepath.Join(tmp, "c")},
		{"custom", []string{"repro", golden, "--op", "module_a.compute.0", "--step", "3", "--rank", "1", "-o", filepath.Join(tmp, "d")}, exitClean,
			[]string{"module_a.compute is a custom API: edit the TODO at the top of " + filepath.Join(tmp, "d", "repro.py")}, nil, filepath.Join(tmp, "d")},
		{"inside the dump", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", filepath.Join(golden, "case")}, exitError,
			nil, []string{"refusing to write", "inside the dump"}, ""},
		{"no -o", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1"}, exitError,
			nil, []string{"-o DIR is required"}, ""},
		{"negative step", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "-3", "--rank", "1", "-o", filepath.Join(tmp, "e")}, exitError,
			nil, []string{"--step -3"}, ""},
		{"bad device", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", filepath.Join(tmp, "e"), "--device", "gpu"}, exitError,
			nil, []string{`device "gpu"`}, ""},
		{"not empty", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", notEmpty}, exitError,
			nil, []string{"not empty", "--force"}, ""},
		{"not empty with --force", []string{"repro", golden, "--op", "Torch.sqrt.0", "--step", "3", "--rank", "1", "-o", notEmpty, "--force"}, exitClean,
			[]string{"wrote the case of Torch.sqrt.0.forward"}, nil, notEmpty},
		{"statistics only", []string{"repro", statsOnly, "-o", filepath.Join(tmp, "f")}, exitError,
			nil, []string{"statistics only", "collect a tensor dump of this call first", "nanhunt plan"}, ""},
		{"no dump", []string{"repro", filepath.Join(tmp, "nothing"), "-o", filepath.Join(tmp, "g")}, exitError,
			nil, []string{"nothing"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := reproCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out, errOut)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout %q lacks %q", out, s)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if tt.stderr == nil && errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
			if tt.files != "" {
				for _, f := range []string{repro.CaseJSON, repro.ReproPy} {
					if _, err := os.Stat(filepath.Join(tt.files, f)); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	if ents, _ := os.ReadDir(golden); len(ents) != 1 {
		t.Errorf("the dump was written to: %v", ents)
	}
}

// TestReproCommandRealDump writes the case of the root cause of a real
// tensor dump and runs it with /usr/bin/python3, which must have torch.
func TestReproCommandRealDump(t *testing.T) {
	dump := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "tensor")
	out := filepath.Join(t.TempDir(), "case")
	stdout, stderr, code := reproCLI(t, "repro", dump, "-o", out)
	if code != exitClean || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if want := "wrote the case of Torch.sqrt.0.backward, step 5, rank 2 (the root cause found by trace)"; !strings.Contains(stdout, want) {
		t.Errorf("stdout %q lacks %q", stdout, want)
	}
	// the same call on a clean rank is a comparison, not the root cause
	stdout, _, code = reproCLI(t, "repro", dump, "-o", filepath.Join(t.TempDir(), "clean"), "--rank", "0")
	if want := "rank 0 (the root cause's call, on a rank that did not make it: a clean one to compare with)"; code != exitClean || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout %q lacks %q", code, stdout, want)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Fatalf("/usr/bin/python3 with torch is needed to run repro.py (Debian: apt-get install python3-torch): %v", err)
	}
	cmd := exec.CommandContext(context.Background(), "/usr/bin/python3", filepath.Join(out, repro.ReproPy), "--device", "cpu")
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("repro.py: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "REPRODUCED: output.0 holds +inf") {
		t.Errorf("repro.py output:\n%s", b)
	}
}
