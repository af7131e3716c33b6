package repro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenDump is a hand-written tensor dump; its .pt files are small tensors
// of the recorded dtypes and shapes that testdata/make_golden_tensors.py
// wrote with torch.save (these tests read the text repro writes, they do not
// run it).
const goldenDump = "testdata/golden-dump"

func writeCase(t *testing.T, op string, device string) (*Case, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "case")
	c, err := Write(Options{Path: goldenDump, Op: op, Step: 3, Rank: 1, Out: out, Device: device})
	if err != nil {
		t.Fatal(err)
	}
	return c, out
}

func readCaseFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReproGolden(t *testing.T) {
	tests := []struct {
		op, device string
		files      []string // golden files: case.json, repro.py
	}{
		{"Functional.pad.0", "cpu", []string{CaseJSON, ReproPy}},
		{"Torch.sqrt.0.backward", "", []string{CaseJSON, ReproPy}},
		{"Tensor.to.0.forward", "cuda:1", []string{CaseJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			_, dir := writeCase(t, tt.op, tt.device)
			for _, f := range tt.files {
				golden(t, tt.op+"."+f+".golden", readCaseFile(t, dir, f))
			}
		})
	}
}

// runFunc is the part of repro.py that differs from case to case.
func runFunc(t *testing.T, dir string) string {
	t.Helper()
	s := string(readCaseFile(t, dir, ReproPy))
	i, j := strings.Index(s, "\ndef run(device):"), strings.Index(s, "\ndef flatten(")
	if i < 0 || j < i {
		t.Fatalf("no run function in:\n%s", s)
	}
	return s[i:j]
}

func TestReproScriptCalls(t *testing.T) {
	tests := []struct {
		op       string
		runnable bool
		want     []string // lines of repro.py
		not      []string
	}{
		{"Tensor.__getitem__.0.forward", true, []string{
			`t0 = load("Tensor.__getitem__.0.forward.input.0.pt", device)  # input_args.0 of Tensor.__getitem__.0.forward`,
			"out = t0.__getitem__((slice(None, 2, None), ..., None, -1))\n    return [(slot, \"\", v) for slot, v in flatten(out).items()]",
		}, []string{"leaf("}},
		{"Tensor.mul_.0.backward", true, []string{
			`t0 = leaf(load("Tensor.mul_.0.forward.input.0.pt", device))  # input_args.0 of Tensor.mul_.0.forward`,
			`t1 = load("Tensor.mul_.0.forward.input.1.pt", device)  # input_args.1 of Tensor.mul_.0.forward`,
			"out = t0.clone().mul_(t1)\n    forward = flatten(out)",
			`("output.0", g0),`,
			`("output.0", "grad of input_args.0", t0.grad),`,
		}, []string{"t1.grad"}},
		{"Tensor.to.0.forward", true, []string{
			`t0.to(None, dtype=torch.bfloat16, device=torch.device(device), non_blocking=False, memory_format=torch.preserve_format, **{"odd key": 1})`,
			`"input_args.1: msprobe recorded {} (a positional torch.dtype or torch.device is not analysed): None stands in for it",`,
		}, nil},
		{"NPU.npu_rms_norm.0.forward", true, []string{
			"    if torch_npu is None:\n        raise CannotRun(\"torch_npu.npu_rms_norm(...)\" + \" needs torch_npu, which is not installed here\")",
			"out = torch_npu.npu_rms_norm(t0, t1, epsilon=1e-06)",
			`"output.1": {"max": 1.0, "min": 0.5, "mean": 0.75, "norm": 1.118033988749895, "holds": "finite", "shape": [2, 1], "grad_of": None},`,
		}, nil},
		{"Distributed.all_reduce.1.forward", false, []string{
			`raise CannotRun("Distributed.all_reduce.1.forward is a torch.distributed call: it needs the other ranks of the job, so it cannot be re-run alone")`,
		}, []string{"load("}},
		{"module_a.compute.0", false, []string{
			"# TODO: import the function registered as module_a.compute, e.g.\n#     from module_a import compute as API\n# and assign it to API. Until then this case exits with status 2.\nAPI = None",
			`if API is None:`,
			`out = API(t0, scale=NAN)`,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			c, dir := writeCase(t, tt.op, "")
			if c.Runnable != tt.runnable {
				t.Errorf("runnable %v", c.Runnable)
			}
			script := string(readCaseFile(t, dir, ReproPy))
			for _, w := range tt.want {
				if !strings.Contains(script, w) {
					t.Errorf("repro.py lacks %q; its run function:\n%s", w, runFunc(t, dir))
				}
			}
			for _, w := range tt.not {
				if strings.Contains(runFunc(t, dir), w) {
					t.Errorf("repro.py's run function has %q:\n%s", w, runFunc(t, dir))
				}
			}
		})
	}
}

func TestReproCaseFolder(t *testing.T) {
	c, dir := writeCase(t, "Torch.sqrt.0.backward", "")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := "Torch.sqrt.0.backward.input.0.pt Torch.sqrt.0.forward.input.0.pt case.json repro.py"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("case folder holds %s, want %s", got, want)
	}
	if got := strings.Join(c.Files, " "); got != "Torch.sqrt.0.forward.input.0.pt Torch.sqrt.0.backward.input.0.pt" {
		t.Errorf("Files %s", got)
	}
	if c.Forward != "Torch.sqrt.0.forward" || c.Direction != "backward" || c.API != "Torch.sqrt" || c.Step != 3 || c.Rank != 1 || c.FromVerdict {
		t.Errorf("%+v", c)
	}
	if info, err := os.Stat(filepath.Join(dir, ReproPy)); err != nil || info.Mode()&0o100 == 0 {
		t.Errorf("repro.py not executable: %v", err)
	}
}
