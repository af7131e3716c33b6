package trace

import (
	"fmt"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// A value made in the forward can leave no trace in what follows: a call
// that selects from it (torch.where, masked_fill, index_select) keeps the
// finite elements only, the loss is finite, and the value comes back in
// the backward, where the gradient of the selection (zero at the masked
// positions) meets the non-finite derivative of the call that made it
// (README "How it decides", 11). The origin is what the rules say; the
// re-read of the origin rank (timeline.go) watches the calls after the
// forward call to say which call hid the value and where it came back.

// hiddenWatch follows a forward value through the calls after the call
// that made it. Two cases: the origin is that forward call (it made NaN,
// which is severe there), or the origin is its backward entry (the
// forward call made a value that is not severe in the forward, a -inf of
// log(0), and the backward made the severe one from it).
type hiddenWatch struct {
	on      bool            // still watching
	watch   nonfinite.Class // the values followed: NaN, or any non-finite one
	forward string          // the forward call to start at, when the origin is its backward entry
	root    string          // that origin
	made    string          // the forward call that made the value
	hider   *event          // the first call whose inputs held it and outputs did not
	back    *event          // the first later call that made it from inputs without it
	failed  bool            // it flowed on, or came back elsewhere
	seen    int             // calls looked at
}

// newHiddenWatch is the watch for an origin op: started at the root op
// when it is a forward call, at its forward call when it is a backward
// entry.
func newHiddenWatch(op string) hiddenWatch {
	n := dump.ParseName(op)
	if n.Dir == notation.Backward && !n.Module {
		return hiddenWatch{forward: n.ForwardName(), root: op, watch: nonfinite.NaN | nonfinite.Inf}
	}
	return hiddenWatch{watch: nonfinite.NaN}
}

// start watches after a forward call whose outputs hold what is watched.
func (h *hiddenWatch) start(e *dump.Entry, n dump.Name) {
	h.on = outputClass(e)&h.watch != 0 && n.Dir == notation.Forward && !n.IsDistributed()
	h.made = e.Name
	if !h.on {
		h.failed = true
	}
}

// see looks at one call after it, read whole.
func (h *hiddenWatch) see(e *dump.Entry, n dump.Name) {
	if h.seen++; h.seen > maxCallsAfter {
		h.failed, h.on = true, false
		return
	}
	in, out, outsKnown := false, false, true
	outs := 0
	for i := range e.Tensors {
		t := &e.Tensors[i]
		c := policy.Holds(t)
		if t.Field == dump.Output || t.Field == dump.ParamGrads {
			outs++
			out = out || c&h.watch != 0
			outsKnown = outsKnown && (t.HasStats() || t.Empty)
			continue
		}
		in = in || c&h.watch != 0
	}
	switch {
	case out && !in && h.hider != nil && (h.root == "" || e.Name == h.root):
		h.back = &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
		h.on = false
	case out || (in && (outs == 0 || !outsKnown)):
		// it flowed on, or was made again, or where it went cannot be told
		h.failed, h.on = true, false
	case in && h.hider == nil:
		h.hider = &event{index: e.Index, name: e.Name, dir: passOf(n), module: n.Module, collIdx: -1, recompute: e.Recompute}
		if n.IsDistributed() {
			h.hider.collIdx = 0
		}
	}
}

// found reports whether the watch saw the value hidden and come back.
func (h *hiddenWatch) found() bool { return !h.failed && h.hider != nil && h.back != nil }

// explanation is what the watch found, once the calls are placed in
// their phases: nil unless a forward call hid the value and a backward
// call brought it back.
func (h *hiddenWatch) explanation(o *verdict.Origin) *verdict.Explanation {
	if !h.found() || h.hider.phase != policy.Forward || h.back.phase.Stage() != policy.Backward.Stage() {
		return nil
	}
	if h.root == "" && o.Stage != policy.Forward.Stage() {
		return nil
	}
	what := "NaN"
	if h.root != "" {
		what = "a non-finite value"
	}
	text := fmt.Sprintf("%s made %s in the forward and %s hid it: its input held it, its output is finite, and no call after it "+
		"held one until the backward (the loss was finite). It came back at %s, which made it from finite gradients: the zero gradient "+
		"of the masked positions times the non-finite derivative there is not finite.", h.made, what, h.hider.name, h.back.name)
	return &verdict.Explanation{Kind: verdict.ExplainHidden, Op: h.made, Step: o.Step, Text: text}
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
