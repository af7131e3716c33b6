package reference

import (
	"fmt"
	"testing"
)

// iv is an int argument.
func iv(n int) string { return fmt.Sprintf(`{"type": "int", "value": %d}`, n) }

// single is a one-step, one-rank run.
func single(entries ...string) run { return oneStep(map[int][]string{0: entries}) }

// Values and the rule set (README sections 1 and 2), on one rank.
func TestValuesAndRules(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		// want is the origin op and kind; "" means no anomaly
		op, kind string
	}{
		{"empty output is ignored", []string{
			E("Torch.empty.0.forward", fwd(in(), T(nan, nan))),
			E("Torch.add.0.forward", fwd(in(ok, ok), ok))}, "", ""},
		{"new_empty output is ignored", []string{
			E("Tensor.new_empty.0.forward", fwd(in(ok), T(pinf, ninf)))}, "", ""},
		{"mask -inf is ignored but its NaN counts", []string{
			E("Tensor.masked_fill.0.forward", fwd(in(ok, ok), T(nan, ninf)))}, "Tensor.masked_fill.0.forward", "nan"},
		{"copy_ destination is ignored", []string{
			E("Tensor.copy_.0.forward", fwd(in(T(nan, nan), ok), ok))}, "", ""},
		{"out= destination is ignored", []string{
			E("Torch.add.0.forward", fwdKw(in(ok, ok), `"out": `+T(nan, nan), ok))}, "", ""},
		{"casts are never excluded", []string{
			E("Tensor.half.0.forward", fwd(in(T("100000.0", "1.0")), T(pinf, fin)))}, "Tensor.half.0.forward", "inf"},
		{"Mean and Norm never decide", []string{
			E("Torch.sum.0.forward", fwd(in(ok), `{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4], "Max": 60000.0, "Min": 1.0, "Mean": NaN, "Norm": Infinity, "requires_grad": false}`))}, "", ""},
		{"lower-case keys and string nan", []string{
			E("Torch.log.0.forward", fwd(in(ok), `{"type": "torch.Tensor", "max": "nan", "MIN": "-1"}`))}, "Torch.log.0.forward", "nan"},
		{"upper-case string +INF", []string{
			E("Torch.exp.0.forward", fwd(in(ok), `{"type": "torch.Tensor", "Max": "+INF", "Min": "0"}`))}, "Torch.exp.0.forward", "inf"},
		{"string infinity with sign", []string{
			E("Torch.exp.0.forward", fwd(in(ok), `{"type": "torch.Tensor", "Max": "Infinity", "Min": "0"}`))}, "Torch.exp.0.forward", "inf"},
		{"numeric string beyond float64 is +inf", []string{
			E("Torch.exp.0.forward", fwd(in(ok), T(`"1e309"`, `"0.001"`)))}, "Torch.exp.0.forward", "inf"},
		{"finite numeric strings", []string{
			E("Torch.exp.0.forward", fwd(in(ok), T(`"0.001"`, `"-2"`)))}, "", ""},
		{"number beyond float64 is +inf", []string{
			E("Torch.exp.0.forward", fwd(in(ok), T("1e309", "0.5")))}, "Torch.exp.0.forward", "inf"},
		{"null statistics are unknown", []string{
			E("Torch.exp.0.forward", fwd(in(ok), T("null", "null")))}, "", ""},
		{"stat-less tensors say nothing", []string{
			E("Torch.exp.0.forward", fwd(in(ok), `{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "md5": "0x1"}`))}, "", ""},
		{"a non-tensor argument holds its value", []string{
			E("Torch.mul.0.forward", fwd(in(ok, `{"type": "float", "value": NaN}`), T(nan, nan)))}, "Torch.mul.0.forward", "nan"},
		{"a string argument is not a number", []string{
			E("Torch.mul.0.forward", fwd(in(ok, `{"type": "str", "value": "nan"}`), ok))}, "", ""},
		{"nested tensor lists are read", []string{
			E("Torch.cat.0.forward", fwd(in(`[`+ok+`, `+ok+`]`), `[`+ok+`, `+T(nan, fin)+`]`))}, "Torch.cat.0.forward", "nan"},
		{"-inf in the forward is not severe", []string{
			E("Torch.log.0.forward", fwd(in(T("1.0", "0.0")), T(fin, ninf)))}, "", ""},
		{"-inf in the backward is severe", []string{
			E("Torch.relu.0.forward", fwd(in(ok), ok)),
			E("Torch.log.0.backward", bwd(in(ok), T(fin, ninf)))}, "Torch.log.0.backward", "inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analyse(t, single(c.entries...), Options{})
			if c.op == "" {
				expectClean(t, v)
				return
			}
			o := origin(t, v)
			expect(t, "origin.op", o.Op, c.op)
			expect(t, "origin.kind", o.Kind, c.kind)
		})
	}
}

// First signs, roots and the first NaN (README section 5).
func TestFirstSign(t *testing.T) {
	t.Run("birth, inf then first NaN", func(t *testing.T) {
		v := analyse(t, single(
			E("Torch.exp.0.forward", fwd(in(ok), T(pinf, fin))),
			E("Tensor.sum.0.forward", fwd(in(T(pinf, fin)), T(pinf, pinf))),
			E("Tensor.__truediv__.0.forward", fwd(in(T(pinf, fin), T(pinf, pinf)), T(nan, nan)))), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Torch.exp.0.forward")
		expect(t, "origin.kind", o.Kind, "inf")
		expect(t, "origin.captured", o.Captured, true)
		expect(t, "origin.confidence", o.Confidence, "high")
		if v.FirstNaN == nil {
			t.Fatal("no first NaN")
		}
		expect(t, "first_nan", *v.FirstNaN, OpRef{Step: 0, Rank: 0, Op: "Tensor.__truediv__.0.forward"})
	})
	t.Run("inherited: the origin is not in the dump", func(t *testing.T) {
		v := analyse(t, single(E("Torch.matmul.0.forward", fwd(in(T(nan, nan), ok), T(nan, nan)))), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Torch.matmul.0.forward")
		expect(t, "origin.captured", o.Captured, false)
		expect(t, "origin.confidence", o.Confidence, "low")
		expect(t, "row.role", role(t, v, 0, 0).Role, "source")
	})
	t.Run("a new -inf before the first sign is promoted", func(t *testing.T) {
		v := analyse(t, single(
			E("Torch.log.0.forward", fwd(in(T("1.0", "0.0")), T(fin, ninf))),
			E("Functional.softmax.0.forward", fwd(in(T(fin, ninf)), T(nan, nan)))), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Torch.log.0.forward")
		expect(t, "origin.kind", o.Kind, "inf")
		expect(t, "origin.captured", o.Captured, true)
		expect(t, "origin.confidence", o.Confidence, "medium")
		if v.FirstNaN == nil || v.FirstNaN.Op != "Functional.softmax.0.forward" {
			t.Errorf("first_nan: got %+v, want Functional.softmax.0.forward", v.FirstNaN)
		}
	})
	t.Run("a mask's -inf is legitimate: no promotion", func(t *testing.T) {
		v := analyse(t, single(
			E("Tensor.masked_fill.0.forward", fwd(in(ok, ok), T(fin, ninf))),
			E("Functional.softmax.0.forward", fwd(in(T(fin, ninf)), T(nan, nan)))), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Functional.softmax.0.forward")
		expect(t, "origin.kind", o.Kind, "nan")
		expect(t, "origin.confidence", o.Confidence, "high")
	})
	t.Run("a new -inf before the last legitimate source is not promoted", func(t *testing.T) {
		v := analyse(t, single(
			E("Torch.log.0.forward", fwd(in(T("1.0", "0.0")), T(fin, ninf))),
			E("Tensor.masked_fill.0.forward", fwd(in(ok, ok, `{"type": "float", "value": -Infinity}`), T(fin, ninf))),
			E("Functional.softmax.0.forward", fwd(in(T(fin, ninf)), T(nan, nan)))), Options{})
		expect(t, "origin.op", origin(t, v).Op, "Functional.softmax.0.forward")
	})
	t.Run("-inf in a module's parameters is severe", func(t *testing.T) {
		v := analyse(t, single(
			E("Module.fc.Linear.forward.0", `{"input_args": [`+ok+`], "input_kwargs": {}, "output": [`+ok+`], "parameters": {"weight": `+T(fin, ninf)+`}}`)), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Module.fc.Linear.forward.0")
		expect(t, "origin.kind", o.Kind, "inf")
		expect(t, "origin.captured", o.Captured, false)
		// rule 8: the non-finite input is a module's parameters
		expect(t, "origin.stage", o.Stage, "optimizer")
		expect(t, "origin.phase", o.Phase, "optimizer")
	})
	t.Run("parameters_grad members are inputs: never a birth", func(t *testing.T) {
		v := analyse(t, single(
			E("Module.fc.Linear.forward.0", `{"input_args": [`+ok+`], "input_kwargs": {}, "output": [`+ok+`], "parameters": {"weight": `+ok+`}}`),
			E("Module.fc.Linear.parameters_grad.0", `{"weight": [`+T(nan, nan)+`]}`)), Options{})
		o := origin(t, v)
		expect(t, "origin.op", o.Op, "Module.fc.Linear.parameters_grad.0")
		expect(t, "origin.stage", o.Stage, "backward")
		expect(t, "origin.captured", o.Captured, false)
	})
}

// phaseProgram is a rank's step with both passes, a gradient reduction
// and an update; born names the entry whose output is NaN.
func phaseProgram(born string) []string {
	names := []string{
		"Torch.matmul.0.forward",           // before B1
		"Torch.relu.0.forward",             // before B1
		"Torch.relu.0.backward",            // B1
		"Torch.matmul.1.forward",           // between, ran before B1: a recompute
		"Torch.gelu.0.forward",             // between, not before B1
		"Torch.matmul.0.backward",          // B2
		"Tensor.div_.0.forward",            // after B2, before the last collective
		"Tensor.add_.0.forward",            // after B2, before the last collective
		"Distributed.all_reduce.0.forward", // the last collective
		"Tensor.mul_.0.forward",            // after it
	}
	var out []string
	for _, n := range names {
		body := fwd(in(ok), ok)
		if n == born {
			body = fwd(in(ok), T(nan, nan))
		}
		if parseName(n).backward {
			body = bwd(in(ok), ok)
			if n == born {
				body = bwd(in(ok), T(nan, nan))
			}
		}
		out = append(out, E(n, body))
	}
	return out
}

// Phases (README section 4): each rule decides where a birth ran.
func TestPhases(t *testing.T) {
	optimFrame := frameLine("/usr/lib/python3/dist-packages/torch/optim/adam.py", 200, "step", "param.addcdiv_(exp_avg, denom)")
	cases := []struct {
		name, born       string
		construct, stack string
		entries          []string // instead of phaseProgram
		phase            string
	}{
		{name: "rule 1: a backward entry", born: "Torch.relu.0.backward", phase: "backward"},
		{name: "rule 2: construct parent optimizer after B2", born: "Tensor.add_.0.forward",
			construct: `{"Tensor.div_.0.forward": "optimizer"}`, phase: "optimizer"},
		{name: "rule 2: construct parent clip_grad after B2", born: "Tensor.div_.0.forward",
			construct: `{"Tensor.div_.0.forward": "clip_grad"}`, phase: "optimizer"},
		{name: "rule 2: an optimizer frame after B2", born: "Tensor.add_.0.forward",
			stack: stackOf(map[string][]string{"Tensor.div_.0.forward": {optimFrame}}), phase: "optimizer"},
		{name: "rule 2: a clip_grad function after B2", born: "Tensor.add_.0.forward",
			stack: stackOf(map[string][]string{"Tensor.add_.0.forward": {frameLine("/job/train.py", 10, "clip_grad_norm_", "total = norm(g)")}}), phase: "optimizer"},
		{name: "rule 2: a line calling .step( after B2", born: "Tensor.add_.0.forward",
			stack: stackOf(map[string][]string{"Tensor.add_.0.forward": {frameLine("/job/train.py", 12, "train", "opt.step()")}}), phase: "optimizer"},
		{name: "rule 2: before the first entry after the last collective", born: "Tensor.add_.0.forward", phase: "gradient reduction"},
		{name: "rule 2: after the last collective", born: "Tensor.mul_.0.forward", phase: "optimizer"},
		{name: "rule 3: no backward entry", entries: []string{
			E("Distributed.all_reduce.0.forward", fwd(in(ok), ok)),
			E("Tensor.mul_.0.forward", fwd(in(ok), T(nan, nan)))}, phase: "forward"},
		{name: "rule 3: no backward entry, an optimizer frame", entries: []string{
			E("Torch.matmul.0.forward", fwd(in(ok), ok)),
			E("Tensor.mul_.0.forward", fwd(in(ok), ok)),
			E("Tensor.add_.0.forward", fwd(in(ok), T(nan, nan)))},
			stack: stackOf(map[string][]string{"Tensor.mul_.0.forward": {optimFrame}}), phase: "optimizer"},
		{name: "rule 4: before B1", born: "Torch.relu.0.forward", phase: "forward"},
		{name: "rule 4: before B1, whatever the tags say", born: "Torch.matmul.0.forward",
			construct: `{"Torch.matmul.0.forward": "optimizer"}`, stack: stackOf(map[string][]string{"Torch.matmul.0.forward": {optimFrame}}), phase: "forward"},
		{name: "rule 5: between, its op ran before B1", born: "Torch.matmul.1.forward", phase: "forward"},
		{name: "rule 5: between, a kernel only the backward calls", born: "Torch.gelu.0.forward", phase: "backward"},
		{name: "rule 5: between, a backward module as parent", born: "Torch.matmul.1.forward",
			construct: `{"Torch.matmul.1.forward": "Module.fc.Linear.backward.0"}`, phase: "backward"},
		{name: "rule 5: between, a function named backward", born: "Torch.matmul.1.forward",
			stack: stackOf(map[string][]string{"Torch.matmul.1.forward": {frameLine("/job/kernels.py", 30, "backward", "return ext.grad(x)")}}), phase: "backward"},
		{name: "rule 5: between, a checkpoint frame", born: "Torch.gelu.0.forward",
			stack: stackOf(map[string][]string{"Torch.gelu.0.forward": {
				frameLine("/usr/lib/python3/dist-packages/torch/utils/checkpoint.py", 90, "backward", "outputs = ctx.run_function(*args)")}}), phase: "forward"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := c.entries
			if es == nil {
				es = phaseProgram(c.born)
			}
			r := run{0: {0: {entries: es, stack: c.stack, construct: c.construct}}}
			o := origin(t, analyse(t, r, Options{}))
			expect(t, "origin.phase", o.Phase, c.phase)
			expect(t, "origin.stage", o.Stage, stageOf(c.phase))
		})
	}
}

// Collectives (README section 3): slots, roots, peers and pairing.
func TestCollectives(t *testing.T) {
	p2pOp := func(op string, peer int, tensor string) string {
		return fmt.Sprintf(`{"class_type": "torch.distributed.P2POp", "tensor": %s, "op": %q, "peer": %d, "tag": 0}`, tensor, op, peer)
	}
	cases := []struct {
		name    string
		ranks   map[int][]string
		origin  []int
		op      string
		carrier *Hop // nil: none expected
	}{
		{name: "send and recv with keyword peers and a null receive buffer",
			ranks: map[int][]string{
				0: {E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.send.0.forward", fwdKw(in(), `"tensor": `+T(nan, nan)+`, "dst": `+iv(1), T(nan, nan), iv(1)))},
				1: {E("Distributed.recv.0.forward", fwdKw(in(), `"tensor": null, "src": `+iv(0), T(nan, nan), iv(0)))},
			},
			origin: []int{0}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.send.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}},
		{name: "receive buffers on the input side are ignored",
			ranks: map[int][]string{
				0: {E("Distributed.all_gather.0.forward", fwd(in(`[`+T(nan, nan)+`, `+T(pinf, ninf)+`]`, ok), `[`+ok+`, `+ok+`]`, ok)),
					E("Distributed.broadcast.0.forward", fwd(in(ok, iv(0)), ok, iv(0)))},
				1: {E("Distributed.all_gather.0.forward", fwd(in(`[`+T(nan, nan)+`, `+ok+`]`, ok), `[`+ok+`, `+ok+`]`, ok)),
					E("Distributed.broadcast.0.forward", fwd(in(T(nan, nan), iv(0)), ok, iv(0)))},
			}},
		{name: "broadcast: only the root sends (keyword src)",
			ranks: map[int][]string{
				0: {E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.broadcast.0.forward", fwdKw(in(T(nan, nan)), `"src": `+iv(0), T(nan, nan), iv(0)))},
				1: {E("Distributed.broadcast.0.forward", fwdKw(in(T(nan, nan)), `"src": `+iv(0), T(nan, nan), iv(0)))},
			},
			origin: []int{0}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.broadcast.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}},
		{name: "pairing by group, api and k, not by name",
			ranks: map[int][]string{
				0: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), group("a", 0, 1)))},
				1: {E("Distributed.all_reduce.0.forward", allReduce(ok, ok, group("x", 1, 3))),
					E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.all_reduce.1.forward", allReduce(T(nan, nan), T(nan, nan), group("a", 0, 1)))},
				2: {E("Torch.add.0.forward", fwd(in(ok, ok), ok))},
				3: {E("Distributed.all_reduce.0.forward", allReduce(ok, ok, group("x", 1, 3)))},
			},
			origin: []int{1}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.all_reduce.1.forward", FromRanks: []int{1}, ToRanks: []int{0}}},
		{name: "p2p: the k-th message from one rank to another",
			ranks: map[int][]string{
				0: {E("Distributed.send.0.forward", fwd(in(ok, iv(1)), ok, iv(1))),
					E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.isend.0.forward", fwdKw(in(T(nan, nan)), `"dst": `+iv(1), T(nan, nan), iv(1)))},
				1: {E("Distributed.recv.0.forward", fwd(in("null", iv(0)), ok, iv(0))),
					E("Distributed.irecv.0.forward", fwd(in("null", iv(0)), T(nan, nan), iv(0)))},
			},
			origin: []int{0}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.isend.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}},
		{name: "batch_isend_irecv: one message per P2POp",
			ranks: map[int][]string{
				0: {E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.batch_isend_irecv.0.forward", fwd(
						in(`[`+p2pOp("isend", 1, T(nan, nan))+`, `+p2pOp("irecv", 1, "null")+`]`),
						`[`+p2pOp("isend", 1, T(nan, nan))+`, `+p2pOp("irecv", 1, ok)+`]`))},
				1: {E("Distributed.batch_isend_irecv.0.forward", fwd(
					in(`[`+p2pOp("irecv", 0, "null")+`, `+p2pOp("isend", 0, ok)+`]`),
					`[`+p2pOp("irecv", 0, T(nan, nan))+`, `+p2pOp("isend", 0, ok)+`]`))},
			},
			origin: []int{0}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.batch_isend_irecv.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}},
		{name: "group null: pairing by entry name",
			ranks: map[int][]string{
				0: {E("Distributed.all_reduce.2.forward", fwdKw(in(ok), `"group": null`, ok, "null")),
					E("Distributed.all_reduce.3.forward", fwdKw(in(ok), `"group": null`, T(nan, nan), "null"))},
				1: {E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.all_reduce.3.forward", fwdKw(in(T(nan, nan)), `"group": null`, T(nan, nan), "null"))},
			},
			origin: []int{1}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.all_reduce.3.forward", FromRanks: []int{1}, ToRanks: []int{0}}},
		{name: "a collective that sends -inf is its first sign",
			ranks: map[int][]string{
				0: {E("Distributed.all_reduce.0.forward", allReduce(T(fin, ninf), T(fin, ninf), ""))},
				1: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(fin, ninf), ""))},
			},
			origin: []int{0}, op: "Distributed.all_reduce.0.forward",
			carrier: &Hop{Op: "Distributed.all_reduce.0.forward", FromRanks: []int{0}, ToRanks: []int{1}}},
		{name: "several receivers of one instance make one hop",
			ranks: map[int][]string{
				0: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))},
				1: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))},
				2: {E("Torch.log.0.forward", fwd(in(ok), T(nan, nan))),
					E("Distributed.all_reduce.0.forward", allReduce(T(nan, nan), T(nan, nan), ""))},
				3: {E("Distributed.all_reduce.0.forward", allReduce(ok, T(nan, nan), ""))},
			},
			origin: []int{2}, op: "Torch.log.0.forward",
			carrier: &Hop{Op: "Distributed.all_reduce.0.forward", FromRanks: []int{2}, ToRanks: []int{0, 1, 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analyse(t, oneStep(c.ranks), Options{})
			if c.origin == nil {
				expectClean(t, v)
				return
			}
			o := origin(t, v)
			expectInts(t, "origin.ranks", o.Ranks, c.origin)
			expect(t, "origin.op", o.Op, c.op)
			if c.carrier == nil {
				if v.Carrier != nil {
					t.Errorf("carrier: got %s, want none", fmtHop(v.Carrier))
				}
				return
			}
			expectHop(t, "carrier", v.Carrier, *c.carrier)
			if len(v.Spread) != 1 || !hopEqual(v.Spread[0], *c.carrier) {
				t.Errorf("spread: got %+v, want the carrier only", v.Spread)
			}
		})
	}
}
