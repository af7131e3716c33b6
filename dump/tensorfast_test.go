package dump

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// entryCopy is an Entry with its slices copied out of the Reader's buffers.
func entryCopy(e *Entry) Entry {
	c := *e
	c.Tensors = slices.Clone(e.Tensors)
	for i := range c.Tensors {
		c.Tensors[i].Shape = slices.Clone(c.Tensors[i].Shape)
	}
	c.Args = slices.Clone(e.Args)
	for i := range c.Args {
		c.Args[i].GroupRanks = slices.Clone(c.Args[i].GroupRanks)
	}
	c.Kwargs = slices.Clone(e.Kwargs)
	return c
}

// readEntries reads data to its end with the tensors' direct read on or
// off: the entries, the error's text, and how many objects were read
// directly.
func readEntries(data []byte, opt ReaderOptions, fast bool) (entries []Entry, err string, direct int) {
	defer func(off bool) { directOff = off }(directOff)
	directOff = !fast
	r := NewReader(bytes.NewReader(data), opt)
	for r.Next() {
		entries = append(entries, entryCopy(r.Entry()))
	}
	if r.Err() != nil {
		err = r.Err().Error()
	}
	return entries, err, r.direct
}

// sameStats compares entries as DeepEqual does, NaN equal to NaN.
func sameEntries(a, b []Entry) bool {
	nanless := func(es []Entry) []Entry {
		for i := range es {
			for j := range es[i].Tensors {
				t := &es[i].Tensors[j]
				for _, st := range []*Stat{&t.Max, &t.Min, &t.Mean, &t.Norm} {
					if math.IsNaN(st.Value) {
						st.Value = 12345.678
					}
				}
			}
			for j := range es[i].Args {
				if math.IsNaN(es[i].Args[j].Num.Value) {
					es[i].Args[j].Num.Value = 12345.678
				}
			}
		}
		return es
	}
	return reflect.DeepEqual(nanless(a), nanless(b))
}

// checkDirectLikeTokens holds the direct read to the token-by-token one on
// one input, in both modes and at three windows, and returns how many
// objects were read directly with the default window, in both modes.
func checkDirectLikeTokens(t *testing.T, data []byte, opts ...ReaderOptions) int {
	t.Helper()
	n := 0
	if len(opts) == 0 {
		opts = []ReaderOptions{{}, {Details: true}, {WindowSize: 4096}, {Details: true, WindowSize: 97}}
	}
	for _, opt := range opts {
		fast, ferr, direct := readEntries(data, opt, true)
		slow, serr, _ := readEntries(data, opt, false)
		if opt.WindowSize == 0 {
			n += direct
		}
		if ferr != serr {
			t.Fatalf("%+v: direct read ends with %q, tokens with %q", opt, ferr, serr)
		}
		if !sameEntries(fast, slow) {
			for i := range min(len(fast), len(slow)) {
				if !sameEntries(fast[i:i+1], slow[i:i+1]) {
					t.Fatalf("%+v: entry %d:\ndirect %+v\ntokens %+v", opt, i, fast[i], slow[i])
				}
			}
			t.Fatalf("%+v: %d entries read directly, %d by tokens", opt, len(fast), len(slow))
		}
	}
	return n
}

// TestTensorDirectReadLikeTokens: on every real dump the Reader gives the
// same entries, errors included, with the tensors and entries read directly
// as token by token, and most of them are read directly.
func TestTensorDirectReadLikeTokens(t *testing.T) {
	direct, tensors, directEntries, entries := 0, 0, 0, 0
	for i, f := range dumpFiles(t) {
		if testing.Short() && i%5 != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		direct += checkDirectLikeTokens(t, data)
		slow, _, _ := readEntries(data, ReaderOptions{}, false)
		for _, e := range slow {
			tensors += 2 * (len(e.Tensors) + len(e.Args)) // both modes
		}
		r := NewReader(bytes.NewReader(data), ReaderOptions{})
		for r.Next() {
			entries++
		}
		directEntries += r.directEntries
	}
	if tensors == 0 || direct < tensors*9/10 {
		t.Errorf("%d of %d tensors and typed values read directly, want at least nine in ten", direct, tensors)
	}
	if directEntries < entries*3/4 {
		t.Errorf("%d of %d entries read directly, want at least three in four", directEntries, entries)
	}
	t.Logf("%d of %d tensors and typed values, %d of %d entries read directly", direct, tensors, directEntries, entries)
}

// TestTensorDirectReadGivesUp: every shape the direct read must leave to
// the tokens gives what the tokens give.
func TestTensorDirectReadGivesUp(t *testing.T) {
	tensor := `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": 1.5, "Min": -0.75, "Mean": 0.1, "Norm": 3.0, "requires_grad": false}`
	for _, tt := range []struct {
		name, obj string
		direct    bool
	}{
		{"plain", tensor, true},
		{"indented", "{\n     \"type\": \"torch.Tensor\",\n     \"shape\": [\n      4,\n      0\n     ],\n     \"Max\": NaN,\n     \"Min\": -Infinity,\n     \"Mean\": null,\n     \"Norm\": Infinity\n    }", true},
		{"bool statistics", `{"type": "torch.Tensor", "Max": true, "Min": false}`, true},
		{"exponents", `{"Max": 1e308, "Min": -1e309, "Mean": 2.5E+400, "Norm": 1e-400}`, true},
		{"empty shape", `{"type": "torch.Tensor", "shape": [], "Max": 0, "Min": 0}`, true},
		{"data_name", `{"type": "torch.Tensor", "data_name": "x.pt", "Max": 0, "Min": 0}`, true},
		{"member twice", `{"type": "torch.Tensor", "Max": 1, "Max": NaN, "Min": 0}`, false},
		{"other member", `{"type": "torch.Tensor", "md5": "00", "Max": 1, "Min": 0}`, false},
		{"lower case", `{"type": "torch.Tensor", "max": NaN, "Min": 0}`, false},
		{"escaped name", `{"type": "torch.Tensor", "M\u0061x": NaN, "Min": 0}`, false},
		{"escaped type", `{"type": "torch.Ten\u0073or", "Max": 1, "Min": 0}`, false},
		{"string statistic", `{"type": "torch.Tensor", "Max": "nan", "Min": "1e5"}`, false},
		{"list statistic", `{"type": "torch.Tensor", "Max": [1], "Min": 0}`, false},
		{"shape of strings", `{"type": "torch.Tensor", "shape": ["4"], "Max": 1, "Min": 0}`, false},
		{"typed scalar", `{"type": "int", "value": 3}`, true},
		{"typed scalars", `{"type": "float", "value": -Infinity}, {"type": "str", "value": "nan"}, {"type": "bool", "value": true}, {"type": "NoneType", "value": null}, {"type": "float", "value": 1e999}`, true},
		{"value before type", `{"value": 3, "type": "int"}`, false},
		{"a list as value", `{"type": "slice", "value": [1, 2, null]}`, false},
		{"escaped value", `{"type": "str", "value": "a\nb"}`, false},
		{"empty object", `{}`, false},
		{"leading zero", `{"type": "torch.Tensor", "Max": 01, "Min": 0}`, false},
		{"bad fraction", `{"type": "torch.Tensor", "Max": 1., "Min": 0}`, false},
		{"trailing comma", `{"type": "torch.Tensor", "Max": 1, "Min": 0,}`, false},
		{"no colon", `{"type" "torch.Tensor", "Max": 1, "Min": 0}`, false},
		{"literal cut", `{"type": "torch.Tensor", "Max": Na, "Min": 0}`, false},
		{"word after a number", `{"type": "torch.Tensor", "Max": 1x, "Min": 0}`, false},
		{"requires_grad null", `{"type": "torch.Tensor", "Max": 1, "Min": 0, "requires_grad": null}`, false},
		{"long number", `{"type": "torch.Tensor", "Max": 1.` + string(bytes.Repeat([]byte("1"), 5000)) + `, "Min": 0}`, false},
		{"control character", "{\"type\": \"torch.\x01Tensor\", \"Max\": 1, \"Min\": 0}", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(fmt.Sprintf(`{"data": {"Torch.f.0.forward": {"input_args": [%s], "output": [%s]}}}`, tt.obj, tt.obj))
			if direct := checkDirectLikeTokens(t, doc); (direct > 0) != tt.direct {
				t.Errorf("%d objects read directly, want some: %v", direct, tt.direct)
			}
		})
	}
}

// FuzzTensorDirect holds the direct read to the token-by-token one on any
// input: the same entries, the same error.
func FuzzTensorDirect(f *testing.F) {
	f.Add([]byte(`{"data": {"Torch.f.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": 1.5, "Min": -0.75, "Mean": 0.1, "Norm": 3.0, "requires_grad": false}], "output": [{"type": "torch.Tensor", "Max": NaN, "Min": -Infinity, "Mean": null, "Norm": 1e400, "data_name": "a"}]}}}`))
	f.Add([]byte("{\n \"data\": {\n  \"Torch.f.0.forward\": {\n   \"output\": [\n    {\n     \"type\": \"torch.Tensor\",\n     \"shape\": [\n      4\n     ],\n     \"Max\": true,\n     \"Min\": false,\n     \"requires_grad\": true\n    }\n   ]\n  }\n }\n}"))
	f.Add([]byte(`{"data": {"Torch.f.0.forward": {"input_args": [{"type": "torch.Tensor", "shape": [2], "Max": 1, "Min": 0}, null, {"type": "int", "value": 1}], "input_kwargs": {"k": {"type": "str", "value": "nan"}, "group": null}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": 0}], "parameters": {"weight": {"type": "torch.Tensor", "Max": 1, "Min": 0}}, "is_recompute": true}, "Torch.f.0.backward": {"input": [], "output": [null]}}}`))
	f.Add([]byte(`{"data": {"Module.m.parameters_grad.0": {"weight": [{"type": "torch.Tensor", "Max": 1, "Min": 0}], "bias": [null]}, "Distributed.all_reduce.0.forward": {"input_args": [[{"type": "int", "value": 1}]], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "x"}, "op": {"type": "torch.distributed.ReduceOp", "value": "RedOpType.SUM"}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDirectLikeTokens(t, data)
	})
}

// TestEntryDirectRead: entries of every shape readEntry reads give what
// it gives, read directly where entryFast can and by tokens where it
// cannot.
func TestEntryDirectRead(t *testing.T) {
	tensor := `{"type": "torch.Tensor", "shape": [2], "Max": NaN, "Min": 0}`
	for _, tt := range []struct {
		name, entry string
		direct      bool
	}{
		{"fields", `{"input_args": [` + tensor + `, null, {"type": "int", "value": 1}], "input_kwargs": {"k": ` + tensor + `, "group": null}, "output": [` + tensor + `], "parameters": {"weight": ` + tensor + `}, "is_recompute": true}`, true},
		{"backward", `{"input": [` + tensor + `], "output": [null, ` + tensor + `]}`, true},
		{"empty lists", `{"input_args": [], "input_kwargs": {}, "output": []}`, true},
		{"indented", "{\n   \"input_args\": [\n    " + tensor + "\n   ],\n   \"input_kwargs\": {\n    \"group\": null\n   }\n  }", true},
		{"empty entry", `{}`, false},
		{"a field twice", `{"output": [` + tensor + `], "output": [null]}`, false},
		{"is_nan", `{"output": [` + tensor + `], "is_nan": 1}`, false},
		{"output as a dict", `{"output": {"0": ` + tensor + `}}`, false},
		{"a list in a slot", `{"input_args": [[` + tensor + `, {"type": "int", "value": 32}], [[null]]]}`, true},
		{"lists three deep", `{"input_args": [[[[` + tensor + `]]]]}`, false},
		{"a process group", `{"input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "x"}, "op": {"type": "torch.distributed.ReduceOp", "value": "RedOpType.SUM"}}}`, true},
		{"a process group of 2024-11", `{"input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [], "process_group_id": "9f"}}}`, true},
		{"group ranks as strings", `{"input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": ["0"], "group_id": "x"}}}`, false},
		{"a P2POp", `{"input_args": [{"class_type": "torch.distributed.P2POp", "tensor": ` + tensor + `, "op": "isend", "peer": 1}]}`, false},
		{"a number in a slot", `{"input_args": [1.5]}`, false},
		{"other member", `{"output": [` + tensor + `], "stack": "x"}`, false},
		{"escaped kwarg", `{"input_kwargs": {"k\u0041": ` + tensor + `}}`, false},
		{"recompute null", `{"output": [` + tensor + `], "is_recompute": null}`, false},
		{"trailing comma", `{"output": [` + tensor + `,]}`, false},
		{"bad null", `{"output": [nul]}`, false},
		{"gradients", `{"weight": [` + tensor + `], "bias": [null], "is_recompute": false}`, true},
		{"gradients, a parameter twice", `{"weight": [` + tensor + `], "weight": [` + tensor + `]}`, true},
		{"gradients with is_nan", `{"weight": [` + tensor + `], "is_nan": 0}`, false},
		{"gradients as an object", `{"weight": ` + tensor + `}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := "Torch.f.0.forward"
			if strings.HasPrefix(tt.name, "gradients") {
				name = "Module.m.Linear.parameters_grad.0"
			}
			doc := []byte(`{"data": {"` + name + `": ` + tt.entry + `, "Module.m.Linear.backward.0": ` + tt.entry + `}}`)
			checkDirectLikeTokens(t, doc)
			r := NewReader(bytes.NewReader(doc), ReaderOptions{})
			for r.Next() {
			}
			if (r.directEntries > 0) != tt.direct {
				t.Errorf("%d entries read directly, want some: %v", r.directEntries, tt.direct)
			}
		})
	}
}

// TestDirectReadOnGenerated: the generator's scenarios and random runs
// (every format variant it writes: indents, process groups of both
// forms, statistics keys and strings, damage) read the same directly as
// by tokens.
func TestDirectReadOnGenerated(t *testing.T) {
	specs := []synth.Spec{}
	for _, sc := range synth.Scenarios() {
		specs = append(specs, sc.Spec)
	}
	for seed := int64(1); seed <= 6; seed++ {
		specs = append(specs, synth.Random(seed))
	}
	if testing.Short() {
		specs = specs[:len(specs)/3]
	}
	files, direct := 0, 0
	var gen time.Duration
	for _, spec := range specs {
		dir := t.TempDir()
		t0 := time.Now()
		if _, err := synth.Generate(spec, dir); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		gen += time.Since(t0)
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "dump.json" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// every third file (the runs repeat their layout from rank to
			// rank), in both modes; every fifteenth at the other windows too
			files++
			if files%3 != 1 {
				return nil
			}
			opts := []ReaderOptions{{WindowSize: 256 << 10}, {Details: true}}
			if files%15 == 1 {
				opts = nil
			}
			direct += checkDirectLikeTokens(t, data, opts...)
			return nil
		})
		// each run goes once read: together they would be hundreds of MB
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files, generated in %v", files, gen)
	if files == 0 || direct == 0 {
		t.Fatalf("%d files, %d objects read directly", files, direct)
	}
}
