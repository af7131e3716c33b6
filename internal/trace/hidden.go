package trace

import (
	"fmt"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// A NaN made in the forward can leave no trace in what follows: a call
// that selects from it (torch.where, masked_fill, index_select) keeps the
// finite elements only, the loss is finite, and the NaN comes back in the
// backward, where the gradient of the selection (zero at the masked
// positions) meets the non-finite derivative of the call that made it
// (README "How it decides", 6, "Hidden values"). The origin stays the
// forward call; the re-read of the origin rank (timeline.go) watches the
// calls after it to say which call hid the value and where it came back.

// hiddenWatch follows a forward NaN through the calls after the root op.
type hiddenWatch struct {
	on     bool   // still watching
	hider  *event // the first call whose inputs held NaN and outputs did not
	back   *event // the first later call that made NaN from inputs without it
	failed bool   // the NaN flowed on, or came back through an input
	seen   int    // calls looked at after the root op
}

// start watches after a root op whose outputs hold NaN.
func (h *hiddenWatch) start(e *dump.Entry, n dump.Name) {
	h.on = outputClass(e)&nonfinite.NaN != 0 && !n.IsBackward() && !n.IsDistributed()
}

// see looks at one call after the root op, read whole.
func (h *hiddenWatch) see(e *dump.Entry, n dump.Name) {
	if h.seen++; h.seen > maxCallsAfter {
		h.failed, h.on = true, false
		return
	}
	inNaN, outNaN, outsKnown := false, false, true
	outs := 0
	for i := range e.Tensors {
		t := &e.Tensors[i]
		c := policy.Holds(t)
		if t.Field == dump.Output || t.Field == dump.ParamGrads {
			outs++
			outNaN = outNaN || c&nonfinite.NaN != 0
			outsKnown = outsKnown && (t.HasStats() || t.Empty)
			continue
		}
		inNaN = inNaN || c&nonfinite.NaN != 0
	}
	switch {
	case outNaN && !inNaN && h.hider != nil:
		h.back = &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
		h.on = false
	case outNaN || (inNaN && (outs == 0 || !outsKnown)):
		// it flowed on, or was made again, or where it went cannot be told
		h.failed, h.on = true, false
	case inNaN && h.hider == nil:
		h.hider = &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
		if n.IsDistributed() {
			h.hider.collIdx = 0
		}
	}
}

// explanation is what the watch found, once the calls are placed in
// their phases: nil unless a forward call hid the NaN and a backward call
// brought it back.
func (h *hiddenWatch) explanation(o *verdict.Origin) *verdict.Explanation {
	if h.failed || h.hider == nil || h.back == nil || o.Stage != policy.Forward.Stage() {
		return nil
	}
	if h.hider.phase != policy.Forward || h.back.phase.Stage() != policy.Backward.Stage() {
		return nil
	}
	return &verdict.Explanation{Kind: verdict.ExplainHidden, Op: o.Op, Step: o.Step, Text: fmt.Sprintf(
		"%s made NaN in the forward and %s hid it: its input held the NaN, its output is finite, and no call after it held NaN "+
			"until the backward (the loss was finite). It came back at %s, which made NaN from finite gradients: the zero gradient "+
			"of the masked positions times the non-finite derivative there is NaN.", o.Op, h.hider.name, h.back.name)}
}

// safeInput are the calls whose input a mask should select before the
// call: each makes NaN or Inf outside its domain.
var safeInput = map[string]bool{"sqrt": true, "rsqrt": true, "log": true, "log2": true, "log10": true, "log1p": true,
	"reciprocal": true, "acos": true, "asin": true, "atanh": true, "acosh": true, "pow": true}

// hiddenAdvice replaces the origin's hint in next steps with the safe
// form: the input selected or clamped before the call, since a selection
// after it hides the forward's NaN and not the backward's.
func hiddenAdvice(v *verdict.Verdict, hider string) {
	o := v.Origin
	n := dump.ParseName(o.Op)
	fix := fmt.Sprintf("%s: %s hides its NaN from the loss but not from the backward; select or clamp the input before the call, not its output", o.Op, hider)
	if safeInput[n.API] {
		fix = fmt.Sprintf("%s: %s hides its NaN from the loss but not from the backward; compute %s on a where-selected or clamped input "+
			"(torch.%s(torch.where(x > 0, x, 1)), or torch.%s(x.clamp_min(eps))), not only with eps added", o.Op, hider, n.API, n.API, n.API)
	}
	prefix := o.Op + ": "
	for i, s := range v.NextSteps {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			v.NextSteps[i] = fix + "."
			return
		}
	}
	v.NextSteps = append([]string{fix + "."}, v.NextSteps...)
}
