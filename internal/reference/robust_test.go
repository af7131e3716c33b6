package reference

import (
	"testing"
)

// Damaged and odd files are read as far as they go, never with a panic.
func TestOddInput(t *testing.T) {
	str := func(s string) *string { return &s }
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
		r := oneStep(map[int][]string{0: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))}})
		r[0][1] = rankFiles{raw: str(text), stack: `{"0": 1, "1": [[1], "x"]}`, construct: `{"a": [1], "b": {"c": 1}}`}
		if _, err := Analyse(r.write(t), Options{}); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	full := dumpText(t, []string{
		E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
		E("Distributed.all_reduce.0.forward", allReduce(T(nan, nan), T(nan, nan), group("a", 0, 1))),
		E("Torch.exp.0.backward", bwd(in(T(nan, nan)), T(nan, nan))),
	})
	for cut := 0; cut <= len(full); cut += 7 {
		r := oneStep(map[int][]string{0: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), group("a", 0, 1)))}})
		r[0][1] = rankFiles{raw: str(full[:cut])}
		v, err := Analyse(r.write(t), Options{})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if !v.Anomaly {
			t.Errorf("cut at %d: rank 0 received NaN, want an anomaly", cut)
		}
	}
}
