package policy

import "github.com/nanhunt/nanhunt/internal/nonfinite"

// Site is what kind of value a call holds, for what is severe there. It is
// decided from entry names and positions only, so that the byte search and
// the analysis decide it alike without stack.json.
type Site uint8

// The sites.
const (
	// Computation: a forward-named call before the step's last backward
	// entry (the forward, a later micro-batch's forward, a recompute, a
	// kernel that a backward calls).
	Computation Site = iota
	// Gradient: a backward entry (….backward, parameters_grad).
	Gradient
	// Weights: a module's parameters.
	Weights
	// Communication: a value a collective sent or received.
	Communication
	// Update: a call after the step's last backward entry (the gradient
	// reduction and the optimizer).
	Update
)

// Severe is the part of c that is an anomaly at site s: NaN and +Inf
// always; -Inf everywhere but in a computation, where masks are built and
// flow on with -Inf on purpose.
func Severe(c nonfinite.Class, s Site) nonfinite.Class {
	if s == Computation {
		return c &^ nonfinite.NegInf
	}
	return c
}

// NewKinds is what an output holds that its inputs do not: NaN out of
// inputs without NaN, or an infinity out of inputs without any.
func NewKinds(in, out nonfinite.Class) nonfinite.Class {
	var b nonfinite.Class
	if out&nonfinite.NaN != 0 && in&nonfinite.NaN == 0 {
		b |= nonfinite.NaN
	}
	if out&nonfinite.Inf != 0 && in&nonfinite.Inf == 0 {
		b |= out & nonfinite.Inf
	}
	return b
}
