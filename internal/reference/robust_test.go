package reference

import (
	"os"
	"path/filepath"
	"testing"
)

// Odd files are read as far as they go, never with a panic: rank 1's
// dump.json (with a stack.json and construct.json of the wrong shape) next
// to a rank 0 whose all_reduce received NaN.
const (
	oddPeer = `{"task": "statistics", "level": "L1", "data": {"Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.5, "Min": -1.5}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "a"}}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}}}`
	// oddFull is rank 1's whole dump, cut short every 7 bytes.
	oddFull = `{"task": "statistics", "level": "L1", "data": {"Torch.log.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": 1.5, "Min": -1.5}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}, "Distributed.all_reduce.0.forward": {"input_args": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}], "input_kwargs": {"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1], "group_id": "a"}}, "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}, "Torch.exp.0.backward": {"input": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}], "output": [{"type": "torch.Tensor", "Max": NaN, "Min": NaN}]}}}`
)

// writeOdd lays out rank 0 (oddPeer) and rank 1 (these files) at step 0.
func writeOdd(t *testing.T, rank1 map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"rank0/dump.json": string(indented([]byte(oddPeer)))}
	for name, text := range rank1 {
		files["rank1/"+name] = text
	}
	for name, text := range files {
		p := filepath.Join(root, "step0", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestOddInput(t *testing.T) {
	odd := []string{
		`[]`, `null`, `{"data": []}`, `{"data": null}`, `{"data": {"x": 1}}`,
		`{"data": {"Torch.a.0.forward": []}}`,
		`{"data": {"Torch.a.0.forward": {"input_args": {"a": NaN}, "input_kwargs": [NaN], "output": NaN}}}`,
		`{"data": {"Distributed.all_reduce.0.forward": {"input_args": 3, "input_kwargs": null, "output": {"0": NaN}}}}`,
		`{"data": {"Distributed.send.0.forward": {"input_args": [NaN, "x"], "output": [NaN]}}}`,
		`{"data": {"Distributed.batch_isend_irecv.0.forward": {"input_args": [[1, {"op": 3}, {"op": "isend", "peer": "x"}]], "output": [7]}}}`,
		`{"data": {"Distributed.broadcast.0.forward": {"input_kwargs": {"group": {"group_ranks": ["a"]}, "group_src": {"type": "int", "value": 9}}, "input_args": [NaN], "output": [NaN]}}}`,
		`{"data": {"Module.x.parameters_grad.0": {"weight": NaN}, "..backward": {"input": [Infinity]}}}`,
		`{"data": {"a": {"output": [{"Max": {"x": 1}, "Min": [1]}]}}}`,
		"\x00\x01",
		`{"data": {"Torch.a.0.forward": {"output": [{"Max": "\u0000\u0001nanhunt-oracle:NaN"}]}}}`,
	}
	for i, text := range odd {
		dir := writeOdd(t, map[string]string{"dump.json": text, "stack.json": `{"0": 1, "1": [[1], "x"]}`, "construct.json": `{"a": [1], "b": {"c": 1}}`})
		if _, err := Analyse(dir, Options{}); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	full := string(indented([]byte(oddFull)))
	for cut := 0; cut <= len(full); cut += 7 {
		v, err := Analyse(writeOdd(t, map[string]string{"dump.json": full[:cut]}), Options{})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if !v.Anomaly {
			t.Errorf("cut at %d: rank 0 received NaN, want an anomaly", cut)
		}
	}
}
