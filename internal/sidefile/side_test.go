package sidefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

func TestParseFrame(t *testing.T) {
	tests := []struct {
		line string
		want Frame
	}{
		{"File /home/user/job/train_nan.py, line 57, in forward, \n speed = torch.sqrt((d * d).sum(dim=-1, keepdim=True))",
			Frame{File: "/home/user/job/train_nan.py", Line: 57, Func: "forward", Source: "speed = torch.sqrt((d * d).sum(dim=-1, keepdim=True))"}},
		{"File /a, line 3/b.py, line 12, in <module>, \n x = 1",
			Frame{File: "/a, line 3/b.py", Line: 12, Func: "<module>", Source: "x = 1"}},
		{"The call stack retrieval failed.", Frame{Source: "The call stack retrieval failed."}},
	}
	for _, tt := range tests {
		if got := ParseFrame(tt.line); got != tt.want {
			t.Errorf("ParseFrame(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

func TestUserFrame(t *testing.T) {
	frames := []Frame{
		{File: "/path_to_package/mstt/debug/accuracy_tools/msprobe/pytorch/hook_module/wrap_tensor.py", Line: 61},
		{File: "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", Line: 1194},
		{File: "/usr/lib/python3.11/multiprocessing/process.py", Line: 108},
		{File: "/path_to_net/PanGu/pangu/training/utils.py", Line: 176, Func: "get_ltor_reset_masks_and_position_ids"},
	}
	if f := UserFrame(frames); f == nil || f.Line != 176 {
		t.Errorf("UserFrame = %+v, want the PanGu frame", f)
	}
	if f := UserFrame(frames[:3]); f != nil {
		t.Errorf("UserFrame of library frames = %+v, want nil", f)
	}
	if (Frame{File: "/usr/local/lib/python3.10/site-packages/megatron/core/x.py"}).IsLibrary() {
		t.Error("megatron, installed as a package, is the user's code, not PyTorch's")
	}
}

func TestReadStacksBothFormats(t *testing.T) {
	dir := fixturedir.Dir(t)
	tests := []struct {
		file, name, innermost string
		line                  int
	}{
		// v1: {"name": [lines]}, msprobe's own frame first
		{"msprobe-real/megatron-npu-mix-v1stack/stack.json", "Tensor.__add__.0.forward", "/path_to_net/PanGu/pangu/training/utils.py", 176},
		// v2: {"0": [[names], [lines]]}, names sharing a stack
		{"msprobe-generated/bwd-sqrt-zero-rank2-step5/L1/step5/rank2/stack.json", "Torch.sqrt.0.forward", "/home/user/job/train_nan.py", 57},
		// torchvision's model code is the model's code, not PyTorch's
		{"msprobe-real/gpu-resnet50-mix-2steps/step0/proc2016/stack.json", "Functional.conv2d.5.forward", "/root/miniconda3/lib/python3.12/site-packages/torchvision/models/resnet.py", 146},
	}
	for _, tt := range tests {
		f, err := os.Open(filepath.Join(dir, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		sf, err := ReadStackFile(f, map[string]bool{tt.name: true, "absent": true})
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if sf.Triples != 0 {
			t.Errorf("%s: %d stacks read as [function, file, line]; msprobe writes lines", tt.file, sf.Triples)
		}
		st := sf.Frames
		if len(st) != 1 {
			t.Fatalf("%s: got stacks for %d names, want 1", tt.file, len(st))
		}
		uf := UserFrame(st[tt.name])
		if uf == nil || uf.File != tt.innermost || uf.Line != tt.line {
			t.Errorf("%s: user frame of %s = %+v, want %s:%d", tt.file, tt.name, uf, tt.innermost, tt.line)
		}
	}
}

// TestReadStackFileTriples reads stack.json as the nan-overflow-detection
// skill documents it, one frame [function, file, line] per call, and
// counts those members; lists that only look alike stay lines.
func TestReadStackFileTriples(t *testing.T) {
	doc := `{"Torch.ops.aten.linear_0_0": ["linear", "forward.py", 123],
 "Distributed.all_reduce_0_0": ["step", "/job/train.py", 88],
 "Torch.add.0.forward": ["File /a.py, line 3, in f, \n x = y + 1", "File /b.py, line 9, in g, \n f()"],
 "Torch.mul.0.forward": ["f", "g.py", 1.5]}`
	want := map[string]bool{"Torch.ops.aten.linear_0_0": true, "Torch.add.0.forward": true, "Torch.mul.0.forward": true}
	sf, err := ReadStackFile(strings.NewReader(doc), want)
	if err != nil {
		t.Fatal(err)
	}
	if sf.Triples != 2 {
		t.Errorf("Triples = %d, want 2 (wanted or not)", sf.Triples)
	}
	if got, w := sf.Frames["Torch.ops.aten.linear_0_0"], []Frame{{Func: "linear", File: "forward.py", Line: 123}}; !reflect.DeepEqual(got, w) {
		t.Errorf("triple read as %+v, want %+v", got, w)
	}
	if _, ok := sf.Frames["Distributed.all_reduce_0_0"]; ok {
		t.Error("a call that was not asked for was kept")
	}
	if got := sf.Frames["Torch.add.0.forward"]; len(got) != 2 || got[0].File != "/a.py" || got[0].Line != 3 {
		t.Errorf("v1 lines read as %+v", got)
	}
	if got := sf.Frames["Torch.mul.0.forward"]; len(got) != 2 || got[0].Source != "f" {
		t.Errorf("a list with a line that is no integer read as %+v, want two lines", got)
	}
}

func TestReadStacksDamaged(t *testing.T) {
	doc := `{"0": [["a.b.0.forward"], ["File /x.py, line 1, in f, \n y"]], "1": [["c.d.0.forward"], ["File /z.py, line 2`
	st, err := ReadStacks(strings.NewReader(doc), map[string]bool{"a.b.0.forward": true, "c.d.0.forward": true})
	if err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("err = %v, want an error with an offset", err)
	}
	if len(st["a.b.0.forward"]) != 1 {
		t.Errorf("stacks before the damage were lost: %v", st)
	}
}

func TestConstructChain(t *testing.T) {
	doc := `{"Torch.log.0.forward": "Module.encoder.FeatureEncoder.forward.0",
 "Module.encoder.FeatureEncoder.forward.0": "Module.Net.forward.0",
 "Module.Net.forward.0": null,
 "Torch.log.0.backward": null,
 "Tensor.__add__.0.forward": "",
 "Tensor.add_.3.forward": "optimizer",
 "Torch.clone.1.forward": ["Module.Net.forward.0", 2],
 "megatron_micro_step_number": 4,
 "loop.a": "loop.b", "loop.b": "loop.a"}`
	c, err := ReadConstruct(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]string{
		"Torch.log.0.forward":      {"Module.Net.forward.0", "Module.encoder.FeatureEncoder.forward.0"},
		"Torch.log.0.backward":     {"Module.Net.forward.0", "Module.encoder.FeatureEncoder.forward.0"},
		"Tensor.__add__.0.forward": nil,
		"Torch.clone.1.forward":    {"Module.Net.forward.0"},
		"Tensor.add_.3.forward":    {"optimizer"},
		"loop.a":                   {"loop.b"},
	}
	for name, want := range tests {
		if got := c.Chain(name); !reflect.DeepEqual(got, want) {
			t.Errorf("Chain(%s) = %v, want %v", name, got, want)
		}
	}
	if !c.InUpdate("Tensor.add_.3.forward") || c.InUpdate("Torch.log.0.forward") {
		t.Error("InUpdate is wrong")
	}
	if _, ok := c["megatron_micro_step_number"]; ok {
		t.Error("the micro step count is not a call")
	}
}

// ReadAncestors gives every wanted call the chain that reading the whole
// construct.json gives: on the real fixtures (every call of every file),
// and on parents written after their children, API parents and cycles.
func TestReadAncestors(t *testing.T) {
	docs := map[string]string{
		"children first": `{"Torch.add.0.forward": "Module.a.B.forward.0", "Module.a.B.forward.0": "Module.a.A.forward.0", "Module.a.A.forward.0": null}`,
		"api parent":     `{"Torch.add.0.forward": "Torch.custom.0.forward", "Torch.custom.0.forward": "Module.m.M.forward.0", "Module.m.M.forward.0": ""}`,
		"cycle":          `{"Torch.add.0.forward": "Module.a.A.forward.0", "Module.a.A.forward.0": "Module.b.B.forward.0", "Module.b.B.forward.0": "Module.a.A.forward.0"}`,
		"megatron":       `{"Torch.add.0.forward": ["Module.a.A.forward.0", 1], "Module.a.A.forward.0": ["Module.b.B.forward.0", 1], "Module.b.B.forward.0": null, "megatron_micro_step_number": 2}`,
	}
	files, _ := filepath.Glob(filepath.Join(fixturedir.Dir(t), "*", "*", "*", "step*", "rank*", "construct.json"))
	more, _ := filepath.Glob(filepath.Join(fixturedir.Dir(t), "msprobe-real", "*", "step*", "rank*", "construct.json"))
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("only %d construct.json files in the fixtures", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	for name, doc := range docs {
		whole, err := ReadConstruct(strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		calls := make([]string, 0, len(whole))
		for call := range whole {
			calls = append(calls, call)
		}
		sort.Strings(calls)
		step := max(1, len(calls)/40) // every call of the small files, 40 of a big one
		for i := 0; i < len(calls); i += step {
			call := calls[i]
			got, err := ReadAncestors(strings.NewReader(doc), map[string]bool{call: true})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g, w := got.Chain(call), whole.Chain(call); !slices.Equal(g, w) {
				t.Errorf("%s: chain of %s is %v, want %v", name, call, g, w)
			}
		}
	}
}

// A stack shared by more names than are kept (stack.json v2) reads in
// memory that does not grow with the group: the wanted names come back
// with their frames; asked about every name, the kept ones do and the
// truncation is said.
func TestReadStacksHugeGroup(t *testing.T) {
	const n = 300_000
	var b strings.Builder
	b.WriteString(`{"0": [[`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"Torch.add.%d.forward"`, i)
	}
	b.WriteString(`], ["File /job/train.py, line 7, in step, \n opt.step()"]]}`)
	text := b.String()
	want := map[string]bool{"Torch.add.5.forward": true, "Torch.add.299999.forward": true}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := ReadStacks(strings.NewReader(text), want)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["Torch.add.299999.forward"][0].Line != 7 {
		t.Errorf("got %d stacks, want the 2 asked for with their frames: %v", len(got), got)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 3<<20 {
		t.Errorf("reading a group of %d names allocated %d kB: it grows with the group", n, grew>>10)
	}

	all, err := ReadStacksWhere(strings.NewReader(text), want, func([]Frame) bool { return true })
	if !errors.Is(err, ErrStackGroupTooLarge) {
		t.Errorf("err %v, want ErrStackGroupTooLarge", err)
	}
	if len(all) != maxGroupNames+1 || all["Torch.add.299999.forward"] == nil {
		t.Errorf("asked about every name: %d kept, want the first %d and the ones asked for", len(all), maxGroupNames)
	}
}
