package robustness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nanhunt/nanhunt/internal/linktest"
)

// A small msprobe dump written by hand: two ranks, one step. Rank 0's
// Torch.sqrt.0.forward takes a clean tensor and returns NaN; the
// all_reduce after it carries the NaN to rank 1. Each knob makes one
// part of it hostile.
type dumpSpec struct {
	steps        []string // step folder names (default "step0")
	originInputs int      // extra clean tensors in the origin entry's input_args
	originString int      // bytes of a string value inside the origin entry
	stackPad     int      // extra stack.json entries (format v1), about 200 bytes each
	stackGroup   int      // with it, stack.json is format v2: one stack shared by the origin and this many more names
	constructPad int      // extra construct.json entries, about 80 bytes each
	rawOrigin    string   // replaces the origin entry's statistics (a JSON fragment of members)
	padEntries   int      // clean entries before the origin, about 330 bytes each
	clean        bool     // no NaN anywhere: the origin's output is finite
	dumpOnly     bool     // no stack.json and construct.json
}

const cleanTensor = `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": 1.5, "Min": -1.25, "Mean": 0.1, "Norm": 3.0, "requires_grad": false}`
const nanTensor = `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": NaN, "Min": NaN, "Mean": NaN, "Norm": NaN, "requires_grad": false}`

// writeDump writes the dump under root and returns root.
func writeDump(t *testing.T, root string, s dumpSpec) string {
	t.Helper()
	steps := s.steps
	if len(steps) == 0 {
		steps = []string{"step0"}
	}
	for _, step := range steps {
		for rank := 0; rank < 2; rank++ {
			dir := filepath.Join(root, step, fmt.Sprintf("rank%d", rank))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeWith(t, filepath.Join(dir, "dump.json"), func(w *bufio.Writer) { writeRankDump(w, rank, s) })
			if s.dumpOnly {
				continue
			}
			// the padding goes to the origin rank's files, the ones the
			// verdict reads for its code line and module chain: a second
			// copy on rank 1 would only double the scratch space
			stackPad, constructPad := s.stackPad, s.constructPad
			if rank != 0 {
				stackPad, constructPad = 0, 0
			}
			writeWith(t, filepath.Join(dir, "stack.json"), func(w *bufio.Writer) {
				if s.stackGroup > 0 {
					writeStackGroup(w, s.stackGroup)
				} else {
					writeStack(w, stackPad)
				}
			})
			writeWith(t, filepath.Join(dir, "construct.json"), func(w *bufio.Writer) { writeConstruct(w, constructPad) })
		}
	}
	return root
}

func writeWith(t *testing.T, path string, fill func(*bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeRankDump(w *bufio.Writer, rank int, s dumpSpec) {
	w.WriteString(`{"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {` + "\n")
	fmt.Fprintf(w, `"Functional.linear.0.forward": {"input_args": [%s], "input_kwargs": {}, "output": [%s]},`+"\n", cleanTensor, cleanTensor)
	for i := 0; i < s.padEntries; i++ {
		fmt.Fprintf(w, `"Tensor.add.%d.forward": {"input_args": [%s], "input_kwargs": {}, "output": [%s]},`+"\n", i, cleanTensor, cleanTensor)
	}
	input, output := nanTensor, nanTensor
	if s.clean {
		input, output = cleanTensor, cleanTensor
	}
	if rank == 0 {
		input = cleanTensor
		w.WriteString(`"Torch.sqrt.0.forward": {`)
		if s.clean {
			s.rawOrigin = `"input_args": [` + cleanTensor + `], "output": [` + cleanTensor + `]`
		}
		if s.rawOrigin != "" {
			w.WriteString(s.rawOrigin)
		} else {
			w.WriteString(`"input_args": [` + cleanTensor)
			for i := 0; i < s.originInputs; i++ {
				w.WriteString(", " + cleanTensor)
			}
			w.WriteString(`], "input_kwargs": {`)
			if s.originString > 0 {
				w.WriteString(`"note": {"type": "str", "value": "`)
				chunk := strings.Repeat("x", 1<<16)
				for n := s.originString; n > 0; n -= len(chunk) {
					w.WriteString(chunk[:min(n, len(chunk))])
				}
				w.WriteString(`"}`)
			}
			w.WriteString(`}, "output": [` + nanTensor + `]`)
		}
		w.WriteString("},\n")
	}
	group := `{"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g0"}`
	fmt.Fprintf(w, `"Distributed.all_reduce.0.forward": {"input_args": [%s], "input_kwargs": {"group": %s}, "output": [%s]}`+"\n", input, group, output)
	w.WriteString("}}\n")
}

func writeStack(w *bufio.Writer, pad int) {
	w.WriteString(`{"Torch.sqrt.0.forward": ["File /job/train.py, line 42, in forward, \n y = torch.sqrt(x)"]`)
	for i := 0; i < pad; i++ {
		fmt.Fprintf(w, ",\n"+`"Torch.add.%d.forward": ["File /job/train.py, line 50, in forward, \n y = x + 1", "File /usr/lib/python3/dist-packages/torch/nn/modules/module.py, line 1194, in _call_impl"]`, i)
	}
	w.WriteString("}\n")
}

// writeStackGroup writes stack.json v2 whose one stack is shared by the
// origin's call and n more names.
func writeStackGroup(w *bufio.Writer, n int) {
	w.WriteString(`{"0": [["Torch.sqrt.0.forward"`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `, "Torch.add.%d.forward"`, i)
	}
	w.WriteString(`], ["File /job/train.py, line 42, in forward, \n y = torch.sqrt(x)"]]}` + "\n")
}

func writeConstruct(w *bufio.Writer, pad int) {
	w.WriteString(`{"Torch.sqrt.0.forward": "Module.layer.Linear.forward.0", "Module.layer.Linear.forward.0": null`)
	for i := 0; i < pad; i++ {
		fmt.Fprintf(w, ",\n"+`"Torch.add.%d.forward": "Module.block.%d.MLP.forward.0"`, i, i%64)
	}
	w.WriteString("}\n")
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// sparse makes a file of size bytes that are all zero, without writing them.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spreadDump writes the dump under in/dump with its step folder moved to
// in/disk2/step0 and rank 0's folder (the origin) to in/nvme1/rank0, both
// linked back, and returns the dump_path. The folders the links lead to
// lie under in, so the check that no input changed covers them.
func spreadDump(t *testing.T, in string, s dumpSpec) string {
	t.Helper()
	dump := filepath.Join(in, "dump")
	writeDump(t, dump, s)
	linktest.Move(t, filepath.Join(dump, "step0"), filepath.Join(in, "disk2", "step0"), filepath.Join(in, "disk2", "step0"))
	linktest.Move(t, filepath.Join(in, "disk2", "step0", "rank0"), filepath.Join(in, "nvme1", "rank0"), filepath.Join("..", "..", "nvme1", "rank0"))
	return dump
}

// tensors writes two tensor files into the dump_tensor_data folder of
// each rank folder of the dump_path root.
func tensors(t *testing.T, root string) {
	t.Helper()
	ranks, _ := filepath.Glob(filepath.Join(root, "step*", "rank[0-9]*"))
	for _, r := range ranks {
		for _, f := range []string{"Torch.sqrt.0.forward.input.0.pt", "Torch.sqrt.0.forward.output.0.pt"} {
			writeFile(t, filepath.Join(r, "dump_tensor_data", f), "tensor")
		}
	}
}
