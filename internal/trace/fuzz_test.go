package trace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzTrace runs the whole analysis on an arbitrary dump.json next to a
// well-formed one: whatever the bytes, it must not panic, and a verdict
// with an anomaly must name its origin.
func FuzzTrace(f *testing.F) {
	f.Add([]byte(`{"data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": -1.0}], "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}, "Distributed.all_reduce.0.forward": {"input_args": [{"Max": NaN, "Min": NaN}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g"}}, "output": [{"Max": NaN, "Min": NaN}]}}}`))
	f.Add([]byte(`{"data": {"Distributed.recv.0.forward": {"input_args": [{"Max": NaN, "Min": NaN}, {"type": "int", "value": 1}], "output": [{"Max": 1, "Min": 0}]}, "Distributed.batch_isend_irecv.0.forward": {"input_args": [[{"class_type": "torch.distributed.P2POp", "op": "irecv", "peer": 1, "tensor": {"Max": NaN, "Min": 0}}]], "output": [[{"class_type": "P2POp", "op": "irecv", "peer": 1, "tensor": {"Max": NaN, "Min": 0}}]]}}}`))
	f.Add([]byte(`{"data": {"Module.a.B.parameters_grad.0": {"w": [{"Max": Infinity, "Min": 0}]}, "x.y.0.backward": {"input": [{"Max": "-inf", "Min": "-inf"}], "output": [null]}, ".": {}, "a..0.forward": 1}}`))
	f.Add([]byte(`{"data": {"Distributed.broadcast.0.forward": {"input_args": [{"Max": NaN, "Min": NaN}, {"type": "int", "value": 0}], "input_kwargs": {"group_src": {"type": "int", "value": 9}}, "output": [{"Max": NaN, "Min": NaN}]}}}`))
	peer := []byte(`{"data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.0, "Min": -1.0}], "output": [{"type": "torch.Tensor", "Max": 1.0, "Min": 0.5}]}, "Distributed.all_reduce.0.forward": {"input_args": [{"Max": 1, "Min": 0}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "g"}}, "output": [{"Max": NaN, "Min": NaN}]}}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		for rank, doc := range [][]byte{data, peer} {
			dir := filepath.Join(root, "step1", "rank"+string(rune('0'+rank)))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "dump.json"), doc, 0o644); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "stack.json"), data, 0o644)
			os.WriteFile(filepath.Join(dir, "construct.json"), data, 0o644)
		}
		v, err := Run(context.Background(), Options{Path: root})
		if err != nil {
			return
		}
		// (the op may be "": it is the entry's name, whatever the file says)
		if v.Anomaly && (v.Origin == nil || v.Origin.Kind == "" || v.Origin.Confidence == "" || len(v.Origin.Ranks) == 0) {
			t.Fatalf("anomaly without a complete origin: %+v", v.Origin)
		}
	})
}
