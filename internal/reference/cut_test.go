package reference

import (
	"strings"
	"testing"
)

// A file cut short has nothing after its last backward entry (README 4):
// the masks of a later micro-batch's forward that the cut left at the end
// are not severe, as they would be after B2 of a whole file.
func TestCutFileHasNothingAfterB2(t *testing.T) {
	entries := []string{
		E("Torch.masked_fill.0.forward", fwd(in(ok, `{"type": "float", "value": -Infinity}`), T("1", ninf))),
		E("Functional.softmax.0.forward", fwd(in(T("1", ninf)), ok)),
		E("Functional.softmax.0.backward", bwd(in(ok), ok)),
		E("Torch.masked_fill.1.forward", fwd(in(ok, `{"type": "float", "value": -Infinity}`), T("1", ninf))),
		E("Functional.softmax.1.forward", fwd(in(T("1", ninf)), ok)),
		E("Torch.relu.0.forward", fwd(in(ok), ok)),
	}
	whole := dumpText(t, entries)
	// the same bytes cut inside the last entry: a crash during msprobe's write
	cut := whole[:strings.Index(whole, `"Torch.relu.0.forward"`)+30]
	for _, tc := range []struct {
		name    string
		f       rankFiles
		anomaly bool
	}{
		{"whole: -inf after B2 is severe", rankFiles{raw: &whole}, true},
		{"cut: the later micro-batch's masks are not", rankFiles{raw: &cut}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := analyse(t, run{0: {0: tc.f}}, Options{})
			if v.Anomaly != tc.anomaly {
				t.Errorf("anomaly %v, want %v (origin %+v)", v.Anomaly, tc.anomaly, v.Origin)
			}
			if !tc.anomaly {
				return
			}
			o := origin(t, v)
			expect(t, "origin.op", o.Op, "Torch.masked_fill.1.forward") // its -inf argument is severe there
			expect(t, "origin.phase", o.Phase, "optimizer")
		})
	}
}

// Without a backward entry (a forward-only dump), a kernel whose stack
// shows that a backward called it is in the backward (README 4, rule 3).
func TestNoBackwardEntryKernelCalledByBackward(t *testing.T) {
	es := []string{
		E("Torch.matmul.0.forward", fwd(in(ok), ok)),
		E("Ext.attn_grad.0.forward", fwd(in(ok), T(nan, nan))),
	}
	stack := stackOf(map[string][]string{"Ext.attn_grad.0.forward": {
		frameLine("/job/kernels.py", 30, "backward", "return ext.attn_grad(q, k, v, g)"),
		frameLine("/usr/lib/python3/dist-packages/torch/autograd/function.py", 267, "apply", "return user_fn(self, *args)"),
	}})
	o := origin(t, analyse(t, run{0: {0: {entries: es, stack: stack}}}, Options{}))
	expect(t, "origin.phase", o.Phase, "backward")
	expect(t, "origin.stage", o.Stage, "backward")
}
