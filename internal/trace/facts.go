package trace

import (
	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// facts is what one call's statistics say, after the rule set.
type facts struct {
	in, out  nonfinite.Class // non-finite values in the inputs and outputs
	birth    nonfinite.Class // kinds in the output that no input holds
	param    nonfinite.Class // held by a module's parameters
	gradIn   nonfinite.Class // held by inputs that require grad
	negConst bool            // a -inf constant argument: a legitimate -inf source
	statless bool            // tensors were recorded, none with Max/Min
	tensors  int
	stats    int // tensors with Max/Min
	suppress []suppressHit
}

// suppressHit is one rule that changed what a call means.
type suppressHit struct {
	reason string
	values nonfinite.Class
	birth  bool // it would otherwise have been an origin candidate
	input  bool // it ignored an input
}

// classify reads the non-finite content of a call that is not a
// collective. A parameters_grad entry observes gradients other calls made:
// its members count as inputs, so it is never a birth.
func classify(e *dump.Entry, n dump.Name, rules *policy.Matcher) facts {
	var f facts
	var outRaw nonfinite.Class
	rs := rules.ForOp(n.Op())
	observed := n.Dir == notation.ParamGrad
	for i := range e.Tensors {
		t := &e.Tensors[i]
		f.tensors++
		if policy.Decided(t) {
			f.stats++
		}
		c := policy.Holds(t)
		if c == 0 {
			continue
		}
		kept := c
		for _, r := range rs {
			if kept&r.Classes() != 0 && r.Matches(t.Field, t.Arg, t.Key) {
				f.suppress = append(f.suppress, suppressHit{reason: r.Reason, values: kept & r.Classes(), input: t.Field.IsInput()})
				kept &^= r.Classes()
			}
		}
		switch {
		case observed || t.Field.IsInput():
			f.in |= kept
			if t.Field == dump.Parameters {
				f.param |= kept
			}
			if t.RequiresGrad {
				f.gradIn |= kept
			}
		case t.Field == dump.Output:
			outRaw |= c
			f.out |= kept
		}
	}
	for i := range e.Args {
		a := &e.Args[i]
		if a.Num.Class == 0 {
			continue
		}
		if a.Field == dump.Output {
			outRaw |= a.Num.Class
			f.out |= a.Num.Class
			continue
		}
		if !observed && !a.Field.IsInput() {
			continue
		}
		f.in |= a.Num.Class
		if a.Tensor < 0 && a.Num.Class == nonfinite.NegInf {
			f.negConst = true
		}
	}
	f.statless = f.tensors > 0 && f.stats == 0
	f.birth = policy.NewKinds(f.in, f.out)
	if lost := policy.NewKinds(f.in, outRaw) &^ f.birth; lost != 0 {
		// The output rules took away what would have been a birth.
		for i := range f.suppress {
			if f.suppress[i].values&lost != 0 {
				f.suppress[i].birth = true
			}
		}
	}
	return f
}

// passOf is the pass a call belongs to, as its name says: a name that ends
// in ".backward" without a counter is a backward call too (README "How it
// decides", 4).
func passOf(n dump.Name) notation.Direction {
	if n.Dir == notation.DirUnknown && n.IsBackward() {
		return notation.Backward
	}
	return n.Dir
}
