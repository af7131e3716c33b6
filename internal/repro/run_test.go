package repro

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scriptRun is a case written and run with Python.
type scriptRun struct {
	name   string
	opt    Options
	entry  string   // the entry the case must be of
	code   int      // repro.py's exit status
	output []string // what repro.py must print
	args   []string // repro.py's arguments
}

// runCases writes every case, runs all their repro.py in one Python
// process (importing torch is most of a run), and checks each result in a
// subtest of its own.
func runCases(t *testing.T, runs []scriptRun) {
	t.Helper()
	cases := make([]*Case, len(runs))
	reqs := make([]*pyRequest, len(runs))
	for i, r := range runs {
		if r.opt.Out == "" {
			r.opt.Out = filepath.Join(t.TempDir(), "case")
		}
		c, err := Write(r.opt)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		cases[i] = c
		reqs[i] = &pyRequest{Script: filepath.Join(c.Dir, ReproPy), Args: append([]string{}, r.args...), Cwd: t.TempDir()}
	}
	results, err := runBatch(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) { r.check(t, cases[i], results[i].Code, results[i].Output) })
	}
}

func (r scriptRun) check(t *testing.T, c *Case, code int, out string) {
	t.Helper()
	if c.Entry != r.entry {
		t.Errorf("case of %s, want %s", c.Entry, r.entry)
	}
	if code != r.code {
		t.Errorf("repro.py exits %d, want %d; output:\n%s", code, r.code, out)
	}
	for _, w := range r.output {
		if !strings.Contains(out, w) {
			t.Errorf("repro.py's output lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "torch "+torchCheck.version+", device ") {
		t.Errorf("repro.py does not print the torch version and device:\n%s", out)
	}
}

// TestReproRealFixtures re-runs the origins of the real msprobe tensor dumps:
// the bad rank (2) reproduces the NaN/Inf, the clean rank (0) does not.
func TestReproRealFixtures(t *testing.T) {
	gen := filepath.Join(fixtures(t), "msprobe-generated")
	needTorch(t)
	bwd := filepath.Join(gen, "bwd-sqrt-zero-rank2-step5", "tensor")
	fwd := filepath.Join(gen, "fwd-log-neg-rank2-step5", "tensor")
	var truth struct {
		Origin struct {
			Op   string `json:"op"`
			Step int    `json:"step"`
			Rank int    `json:"rank"`
		} `json:"origin"`
	}
	b, err := os.ReadFile(filepath.Join(gen, "fwd-log-neg-rank2-step5", "ground_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	fwdOp := truth.Origin.Op
	runCases(t, []scriptRun{
		{name: "sqrt backward rank 2", opt: Options{Path: bwd, Op: "Torch.sqrt.0.backward", Step: 5, Rank: 2}, entry: "Torch.sqrt.0.backward", code: 1,
			output: []string{"REPRODUCED: output.0 holds +inf, as recorded.", "same statistics"}},
		{name: "sqrt backward rank 0", opt: Options{Path: bwd, Op: "Torch.sqrt.0.backward", Step: 5, Rank: 0}, entry: "Torch.sqrt.0.backward", code: 0,
			output: []string{"FINITE: the re-run gives finite results, as recorded."}},
		{name: "forward origin rank 2", opt: Options{Path: fwd, Op: fwdOp, Step: truth.Origin.Step, Rank: truth.Origin.Rank}, entry: fwdOp, code: 1,
			output: []string{"REPRODUCED: output.0 holds nan, as recorded."}},
		{name: "forward origin rank 0", opt: Options{Path: fwd, Op: fwdOp, Step: truth.Origin.Step, Rank: 0}, entry: fwdOp, code: 0,
			output: []string{"FINITE"}},
		{name: "default op of the backward dump", opt: Options{Path: bwd, Step: Auto, Rank: Auto}, entry: "Torch.sqrt.0.backward", code: 1},
		{name: "default op of the forward dump", opt: Options{Path: fwd, Step: Auto, Rank: Auto}, entry: fwdOp, code: 1},
		{name: "default op on rank 0", opt: Options{Path: fwd, Step: Auto, Rank: 0}, entry: fwdOp, code: 0},
		{name: "mul backward passes the NaN on", opt: Options{Path: bwd, Op: "Tensor.__mul__.0.backward", Step: 5, Rank: 2}, entry: "Tensor.__mul__.0.backward", code: 1,
			output: []string{"REPRODUCED: output.1 holds nan", "the inputs already held NaN/Inf"}},
	})
}

// TestReproEndToEnd writes a tensor dump with PyTorch (testdata/
// make_tensor_dump.py, msprobe's layout without msprobe), writes cases from
// it and runs them.
func TestReproEndToEnd(t *testing.T) {
	needTorch(t)
	root := filepath.Join(t.TempDir(), "dump")
	if out, err := exec.Command(python, filepath.Join("testdata", "make_tensor_dump.py"), root).CombinedOutput(); err != nil {
		t.Fatalf("make_tensor_dump.py: %v\n%s", err, out)
	}
	runs := []scriptRun{
		{name: "log of a negative value", opt: Options{Path: root, Op: "Torch.log.0.forward", Step: 0, Rank: 0}, entry: "Torch.log.0.forward", code: 1,
			output: []string{"REPRODUCED: output.0 holds nan, as recorded.", "same statistics"}},
		{name: "sqrt gradient at 0", opt: Options{Path: root, Op: "Torch.sqrt.0.backward", Step: 0, Rank: 0}, entry: "Torch.sqrt.0.backward", code: 1,
			output: []string{"REPRODUCED: output.0 holds +inf, as recorded.", "output.0  (grad of input_args.0)"}},
		{name: "clean log", opt: Options{Path: root, Op: "Torch.log.1.forward", Step: 0, Rank: 0}, entry: "Torch.log.1.forward", code: 0,
			output: []string{"FINITE: the re-run gives finite results, as recorded.", "same statistics"}},
		{name: "method with keywords", opt: Options{Path: root, Op: "Tensor.sum.0", Step: 0, Rank: 0}, entry: "Tensor.sum.0.forward", code: 0,
			output: []string{"same statistics"}},
		{name: "division by zero", opt: Options{Path: root, Op: "Tensor.__truediv__.0.forward", Step: 0, Rank: 0}, entry: "Tensor.__truediv__.0.forward", code: 1,
			output: []string{"REPRODUCED: output.0 holds +inf"}},
		{name: "default op", opt: Options{Path: root, Step: Auto, Rank: Auto}, entry: "Torch.log.0.forward", code: 1},
	}
	if !torchCheck.cuda {
		runs = append(runs, scriptRun{name: "no CUDA", opt: Options{Path: root, Op: "Torch.log.1.forward", Step: 0, Rank: 0, Device: "cuda"}, entry: "Torch.log.1.forward", code: 2,
			output: []string{"CANNOT RUN: device cuda: CUDA is not available here"}})
	}
	runCases(t, runs)
}

// TestReproCannotRun: calls repro.py cannot run alone exit 2 and say why.
func TestReproCannotRun(t *testing.T) {
	needTorch(t)
	runs := []scriptRun{
		{name: "distributed", opt: Options{Path: goldenDump, Op: "Distributed.all_reduce.1.forward", Step: 3, Rank: 1}, entry: "Distributed.all_reduce.1.forward", code: 2,
			output: []string{"CANNOT RUN: Distributed.all_reduce.1.forward is a torch.distributed call"}},
		{name: "NPU without torch_npu", opt: Options{Path: goldenDump, Op: "NPU.npu_rms_norm.0.forward", Step: 3, Rank: 1}, entry: "NPU.npu_rms_norm.0.forward", code: 2,
			output: []string{"CANNOT RUN: torch_npu.npu_rms_norm(...) needs torch_npu, which is not installed here"}},
		{name: "custom", opt: Options{Path: goldenDump, Op: "module_a.compute.0", Step: 3, Rank: 1}, entry: "module_a.compute.0.forward", code: 2,
			output: []string{"CANNOT RUN: edit repro.py first: import the function registered as module_a.compute"}},
	}
	if exec.Command(python, "-c", "import torch_npu").Run() == nil {
		runs = runs[:1:1] // torch_npu is installed: the NPU case would run (on the golden dump's stand-in tensors)
		runs = append(runs, scriptRun{name: "custom", opt: Options{Path: goldenDump, Op: "module_a.compute.0", Step: 3, Rank: 1}, entry: "module_a.compute.0.forward", code: 2,
			output: []string{"CANNOT RUN: edit repro.py first: import the function registered as module_a.compute"}})
	}
	runCases(t, runs)
}

// TestReproWithoutTorch: a Python that cannot import torch makes repro.py
// say so and exit 2 ("cannot run"), not 1 ("the NaN came back"). It runs
// in a process of its own, as a user runs it.
func TestReproWithoutTorch(t *testing.T) {
	fake := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fake, "torch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "torch", "__init__.py"), []byte("raise ImportError('no torch in this interpreter')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Write(Options{Path: goldenDump, Op: "Functional.pad.0.forward", Step: 3, Rank: 1, Out: filepath.Join(t.TempDir(), "case")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join(c.Dir, ReproPy))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+fake)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("repro.py without torch: %v, want exit 2; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "CANNOT RUN: this Python ("+python+") cannot import torch") {
		t.Errorf("repro.py does not name the interpreter it tried:\n%s", out)
	}
}
