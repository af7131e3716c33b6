package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// holdsOf is what the tensors hold that is not legitimate, as their Max
// and Min show it (a tensor with a NaN shows NaN in both).
func holdsOf(ts ...*tensor) truth.Holds {
	var h truth.Holds
	for _, t := range ts {
		if !t.tainted() {
			continue
		}
		if t.NaN {
			h |= truth.HoldsNaN
			continue
		}
		if t.PInf {
			h |= truth.HoldsPInf
		}
		if t.NInf {
			h |= truth.HoldsNInf
		}
	}
	return h
}

// anyNegInf reports a tensor holding -inf, legitimate or not.
func anyNegInf(ts ...*tensor) bool {
	for _, t := range ts {
		if t != nil && t.NInf && !t.NaN {
			return true
		}
	}
	return false
}

// collSpec describes the collective side of an op for the record.
type collSpec struct {
	clock      truth.Clock
	send, recv []*tensor
	members    []int
	byName     bool // paired by its entry name
}

// noted is an entry just written, as noteEntry records it.
type noted struct {
	name            string
	kind            truth.EntryKind
	op              apiKey   // the op (name without counter and direction)
	site            *mw.Site // the call site of an API entry
	in, out, params []*tensor
	legitNeg        bool
	coll            *collSpec
}

// negArg reports a -inf among non-tensor arguments.
func negArg(in []arg, kw []mw.KV) bool {
	for _, a := range in {
		if f, ok := a.(mw.Float); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	for _, p := range kw {
		if f, ok := p.Value.(mw.Float); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	return false
}
