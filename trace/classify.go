package trace

import "github.com/nanhunt/nanhunt/dump"

// facts is what one call's statistics say, after the rules.
type facts struct {
	in, out  dump.Class // non-finite values in the inputs and outputs
	birth    dump.Class // kinds in the output that no input holds
	param    dump.Class // held by a module's parameters
	gradIn   dump.Class // held by inputs that require grad
	negConst bool       // a -inf constant argument: a legitimate -inf source
	statless bool       // tensors were recorded, none with Max/Min
	tensors  int
	stats    int // tensors with Max/Min
	suppress []suppressHit
}

// suppressHit is one rule (or built-in exclusion) that changed what a call
// means.
type suppressHit struct {
	reason string
	values dump.Class
	birth  bool // it would otherwise have been an origin candidate
	input  bool // it ignored an input
}

// newKinds is what an output holds that its inputs do not: NaN out of inputs
// without NaN, or Inf out of inputs without any Inf.
func newKinds(in, out dump.Class) dump.Class {
	var b dump.Class
	if out&dump.NaN != 0 && in&dump.NaN == 0 {
		b |= dump.NaN
	}
	if out&dump.Inf != 0 && in&dump.Inf == 0 {
		b |= out & dump.Inf
	}
	return b
}

// classify reads the non-finite content of a (non-collective) call.
func classify(e *dump.Entry, n dump.Name, rules *ruleSet) facts {
	var f facts
	var outRaw dump.Class
	rs := rules.forOp(n.Op())
	withStats := 0
	for i := range e.Tensors {
		t := &e.Tensors[i]
		f.tensors++
		if t.HasStats() {
			withStats++
		}
		c := t.Class()
		if c == 0 {
			continue
		}
		kept := c
		for _, r := range rs {
			if kept&r.classes != 0 && r.matches(t.Field, t.Arg, t.Key) {
				f.suppress = append(f.suppress, suppressHit{reason: r.Reason, values: kept & r.classes, input: t.Field.IsInput()})
				kept &^= r.classes
			}
		}
		switch {
		case t.Field == dump.Output || t.Field == dump.ParamGrads:
			outRaw |= c
			f.out |= kept
		case t.Field.IsInput():
			f.in |= kept
			if t.Field == dump.Parameters {
				f.param |= kept
			}
			if t.RequiresGrad {
				f.gradIn |= kept
			}
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
		if !a.Field.IsInput() {
			continue
		}
		f.in |= a.Num.Class
		if a.Tensor < 0 && a.Num.Class == dump.NegInf {
			f.negConst = true
		}
	}
	f.statless = f.tensors > 0 && withStats == 0
	f.stats = withStats
	if n.Dir == dump.ParamGrad {
		return f // gradients observed, not computed here: never an origin
	}
	f.birth = newKinds(f.in, f.out)
	if lost := newKinds(f.in, outRaw) &^ f.birth; lost != 0 {
		// The output rules took away what would have been a birth.
		for i := range f.suppress {
			if f.suppress[i].values&lost != 0 {
				f.suppress[i].birth = true
			}
		}
	}
	return f
}
