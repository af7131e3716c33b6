package reference

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/tinylimits"

	"github.com/nanhunt/nanhunt/internal/trace"
)

// FuzzDifferential: an arbitrary dump.json (and stack.json and
// construct.json) next to a well-formed rank: the fast path and the
// reference give the same verdict, or both refuse the input; the fast path
// with its normal limits and with tiny ones (internal/tinylimits).
func FuzzDifferential(f *testing.F) {
	seeds := []string{
		`{"data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": -1.0}], "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}, "Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g"}}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}}}`,
		`{"data": {"Distributed.recv.0.forward": {"input_args": [null], "input_kwargs": {"src": {"type": "int", "value": 1}}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": 0}, {"type": "int", "value": 1}]}}}`,
		`{"data": {"Torch.mul.0.forward": {"input_args": [{"type": "torch.Tensor", "max": "1", "min": "-Infinity"}], "output": [{"type": "torch.Tensor", "Max": 1, "Min": -1}]}, "Torch.mul.0.backward": {"input": [{"type": "torch.Tensor", "Max": 1, "Min": -1}], "output": [{"type": "torch.Tensor", "Max": Infinity, "Min": 0}]}}}`,
		`{"data": {"Torch.masked_fill.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1, "Min": 0}, {"type": "float", "value": -Infinity}], "output": [{"type": "torch.Tensor", "Max": 1, "Min": -Infinity}]}, "Functional.softmax.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1, "Min": -Infinity}], "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}}}`,
		`{"data": {}}`,
		`{"task": "statistics", "data": {"Module.a.B.parameters_grad.0": {"w": [{"type": "torch.Tensor", "Max": Infinity, "Min": 0}]}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	peer := []byte(`{"data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5}], "output": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5}]}, "Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1, "Min": 0}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g"}}, "output": [{"type": "torch.Tensor", "Max": 2, "Min": 0}]}, "Distributed.recv.0.forward": {"input_args": [null], "input_kwargs": {"src": {"type": "int", "value": 0}}, "output": [{"type": "torch.Tensor", "Max": 1, "Min": 0}, {"type": "int", "value": 0}]}}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		for rank, doc := range [][]byte{indented(data), indented(peer)} {
			dir := filepath.Join(root, "step1", "rank"+string(rune('0'+rank)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "dump.json"), doc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ref, rerr := Analyse(root, Options{})
		for _, ctx := range []context.Context{context.Background(), tinylimits.With(context.Background())} {
			limits := map[bool]string{false: "normal", true: "tiny"}[tinylimits.On(ctx)]
			fast, ferr := trace.Run(ctx, trace.Options{Path: root})
			if ferr != nil || rerr != nil {
				if (ferr == nil) != (rerr == nil) {
					t.Fatalf("fast error (%s limits) %v, reference error %v", limits, ferr, rerr)
				}
				continue
			}
			if d := DiffWith(ref, FromTrace(fast), DiffOptions{}); len(d) > 0 {
				t.Fatalf("fast path (%s limits) and reference disagree:\n%s\ninput:\n%s", limits, strings.Join(d, "\n"), data)
			}
		}
	})
}
