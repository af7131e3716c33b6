package policy

import (
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/bytesearch"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/sidefile"
)

func TestBuiltinRules(t *testing.T) {
	m := Default().Matcher()
	cases := []struct {
		op    string
		field dump.Field
		arg   int
		key   string
		c     nonfinite.Class
		taken bool // some rule takes c away here
	}{
		{"Torch.empty", dump.Output, 0, "", nonfinite.NaN, true},
		{"Tensor.new_empty", dump.Output, 0, "", nonfinite.PosInf, true},
		{"Tensor.masked_fill", dump.Output, 0, "", nonfinite.NegInf, true},
		{"Tensor.masked_fill", dump.Output, 0, "", nonfinite.NaN, false}, // a NaN from a mask op counts
		{"Torch.full", dump.Output, 0, "", nonfinite.NegInf, true},
		{"Tensor.copy_", dump.InputArgs, 0, "", nonfinite.NaN, true},
		{"Tensor.copy_", dump.InputArgs, 1, "", nonfinite.NaN, false}, // the source is read
		{"Torch.add", dump.InputKwargs, 0, "out", nonfinite.NaN, true},
		{"Tensor.half", dump.Output, 0, "", nonfinite.PosInf, false}, // casts are never excluded
		{"Torch.log", dump.Output, 0, "", nonfinite.NaN, false},
	}
	for _, c := range cases {
		taken := false
		for _, r := range m.ForOp(c.op) {
			if r.Classes()&c.c != 0 && r.Matches(c.field, c.arg, c.key) {
				taken = true
			}
		}
		if taken != c.taken {
			t.Errorf("%s %s.%d%s %v: taken %v, want %v", c.op, c.field, c.arg, c.key, c.c, taken, c.taken)
		}
	}
}

func TestUserRules(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"op": "Tensor.my_mask*", "side": "output", "values": "-inf", "reason": "our mask"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(rules)
	if err != nil {
		t.Fatal(err)
	}
	var ours []*Rule
	for _, r := range p.Matcher().ForOp("Tensor.my_mask_fill") {
		if r.Reason == "our mask" {
			ours = append(ours, r)
		}
	}
	if len(ours) != 1 || ours[0].Classes() != nonfinite.NegInf {
		t.Errorf("user rules of Tensor.my_mask_fill: %+v", ours)
	}
	for _, bad := range []string{
		`[{"side": "output", "values": "nan"}]`,
		`[{"op": "[", "side": "output", "values": "nan"}]`,
		`[{"op": "x", "side": "middle", "values": "nan"}]`,
		`[{"op": "x", "side": "input", "values": "zero"}]`,
		`not json`,
	} {
		if _, err := ParseRules([]byte(bad)); err == nil {
			t.Errorf("ParseRules(%s) accepted", bad)
		}
	}
}

// A collective's output is its positional arguments, null items
// included, then its keyword arguments in the order they were passed.
func TestCollectiveOutputSlots(t *testing.T) {
	recv := Collective("recv")
	for _, tc := range []struct {
		pos, numArgs int
		kwargs       []string
		want         bool
	}{
		{0, 1, []string{"src"}, true},           // recv(buf, src=1): input_args [null]
		{1, 1, []string{"src"}, false},          // the src value
		{0, 2, nil, true},                       // recv(buf, 1)
		{0, 0, []string{"tensor", "src"}, true}, // recv(tensor=buf, src=1)
		{1, 0, []string{"tensor", "src"}, false},
	} {
		if got := recv.IsReceiveOutput(tc.pos, tc.numArgs, tc.kwargs); got != tc.want {
			t.Errorf("recv output %d with %d args and kwargs %v: %v, want %v", tc.pos, tc.numArgs, tc.kwargs, got, tc.want)
		}
	}
	ag := Collective("all_gather")
	if !ag.IsSendInput(false, 1, "") || ag.IsSendInput(false, 0, "") || !ag.IsReceiveOutput(0, 2, nil) {
		t.Error("all_gather: the tensor list receives, the tensor sends")
	}
	if s := Collective("npu_all_reduce"); s.Unknown || !s.IsSendInput(false, 0, "") {
		t.Error("npu_ spellings are the torch APIs")
	}
	if !Collective("made_up").Unknown || !Collective("barrier").NoTensors || !Collective("batch_isend_irecv").Batch {
		t.Error("unknown, object and batch collectives")
	}
	if !IsCollective("Distributed.all_reduce.0.forward") || !IsCollective("MintDistributed.send.1.forward") || IsCollective("Torch.distributed_thing.0.forward") {
		t.Error("IsCollective")
	}
}

func TestPhaseTags(t *testing.T) {
	frames := func(lines ...string) []sidefile.Frame {
		var out []sidefile.Frame
		for _, l := range lines {
			out = append(out, sidefile.ParseFrame(l))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		frames []sidefile.Frame
		want   Frames
	}{
		{"torch.optim", frames("File /usr/lib/python3/dist-packages/torch/optim/adam.py, line 200, in _single_tensor_adam, \n param.addcdiv_(exp_avg, denom)"), Frames{Optimizer: true}},
		{"megatron optimizer", frames("File /job/megatron/core/optimizer/optimizer.py, line 9, in step, \n x.add_(y)"), Frames{Optimizer: true}},
		{"a line calling .step(", frames("File /job/train.py, line 150, in worker, \n opt.step()"), Frames{Optimizer: true}},
		{"clip_grad", frames("File /job/utils.py, line 3, in clip_grad_norm_fp32, \n total.sqrt_()"), Frames{Optimizer: true}},
		{"a Function's backward", frames("File /job/model.py, line 86, in backward, \n dq, dk, dv = ext.grad(q, k, v, g)",
			"File /usr/lib/python3/dist-packages/torch/autograd/function.py, line 267, in apply, \n return user_fn(self, *args)"), Frames{Backward: true}},
		{"a recompute", frames("File /usr/lib/python3/dist-packages/torch/utils/checkpoint.py, line 90, in backward, \n outputs = ctx.run_function(*args)"), Frames{Checkpoint: true, Backward: true}},
		{"a forward", frames("File /job/model.py, line 57, in forward, \n speed = torch.sqrt(x)"), Frames{}},
		{"optimizer is not a substring match", frames("File /job/my_optimizer_utils.py, line 1, in f, \n x = y"), Frames{}},
	} {
		if got := ReadFrames(tc.frames); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	for parent, want := range map[string]Phase{"optimizer": Optimizer, "clip_grad": Optimizer, "Module.fc.Linear.backward.0": Backward} {
		if got, ok := ParentPhase(parent); !ok || got != want {
			t.Errorf("ParentPhase(%q) = %v, %v", parent, got, ok)
		}
	}
	for _, parent := range []string{"", "Module.fc.Linear.forward.0", "Functional.linear.0.backward"} {
		if _, ok := ParentPhase(parent); ok {
			t.Errorf("ParentPhase(%q) says something", parent)
		}
	}
	if Reduction.Stage() != "backward" || Reduction.String() != "gradient reduction" || Optimizer.Stage() != "optimizer" {
		t.Error("phase words")
	}
}

func TestSevere(t *testing.T) {
	all := nonfinite.NaN | nonfinite.PosInf | nonfinite.NegInf
	if got := Severe(all, Computation); got != nonfinite.NaN|nonfinite.PosInf {
		t.Errorf("computation: %v", got)
	}
	for _, s := range []Site{Gradient, Weights, Communication, Update} {
		if got := Severe(all, s); got != all {
			t.Errorf("site %d: %v", s, got)
		}
	}
	if NewKinds(nonfinite.NegInf, nonfinite.NaN|nonfinite.NegInf) != nonfinite.NaN ||
		NewKinds(nonfinite.PosInf, nonfinite.NegInf) != 0 || NewKinds(0, nonfinite.PosInf) != nonfinite.PosInf {
		t.Error("NewKinds")
	}
}

func TestClearsFile(t *testing.T) {
	h := maskHits
	for _, tc := range []struct {
		name    string
		h       *bytesearch.Hits
		lastBwd int64
		want    bool
	}{
		{"masks before the last backward", h(func(*bytesearch.Hits) {}), 500, true},
		{"masks and no backward entry", h(func(*bytesearch.Hits) {}), -1, true},
		{"a hit after the last backward", h(func(*bytesearch.Hits) {}), 50, false},
		{"a NaN or +inf suspect", h(func(x *bytesearch.Hits) { x.FirstSevere = 150 }), 500, false},
		{"in a module or a collective", h(func(x *bytesearch.Hits) { x.Forward = false }), 500, false},
		{"cut by a crash", h(func(x *bytesearch.Hits) { x.Whole = false }), 500, false},
		{"no statistics", h(func(x *bytesearch.Hits) { x.Stats = 0 }), 500, false},
		{"no suspect", h(func(x *bytesearch.Hits) { x.Spans = nil }), 50, true},
		{"no suspect, no tensor (maybe no entry)", h(func(x *bytesearch.Hits) { x.Spans, x.Tensors, x.Stats = nil, 0, 0 }), 50, false},
	} {
		if got := ClearsFile(tc.h, tc.lastBwd); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if s := Search(); len(s.IgnoredStats) != 2 || !strings.Contains(strings.Join(s.IgnoredStats, ","), "Norm") {
		t.Errorf("Search() = %+v", s)
	}
}
