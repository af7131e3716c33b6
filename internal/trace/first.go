package trace

import (
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// role is how a rank first met the anomaly in a step.
type role uint8

const (
	roleClean     role = iota
	roleBirth          // its own call made it from clean inputs (origin captured)
	roleInherited      // the first call that shows it already had it in its inputs
	roleSentBad        // the first sign is non-finite data it sent into a collective
	roleReceived       // a collective brought it in: sent clean, received non-finite
	roleFlagged        // nan_check: the NPU overflow flag was raised
)

// local is a rank's own account of a step, before other ranks are heard.
type local struct {
	first    *event          // the first sign: the first call with a severe value
	root     *event          // origin candidate on this rank: first, or a -inf birth before it
	role     role            // what the first sign was
	kind     nonfinite.Class // what the root's output newly held (or the inputs, when inherited)
	promoted bool            // root is an earlier -inf birth that the anomaly grew from
	firstNaN *event          // first call with NaN output at or after root, when root made Inf
	births   []*event        // calls that made a new kind, in order (candidates)
}

// site says what kind of values a call holds (see policy.Site).
func (s *rankScan) site(ev *event) policy.Site {
	switch {
	case ev.collIdx >= 0:
		return policy.Communication
	case ev.dir == notation.Backward || ev.dir == notation.ParamGrad:
		return policy.Gradient
	case s.lastBwd >= 0 && ev.index > s.lastBwd && s.damage == nil:
		return policy.Update // (a damaged file has nothing after its last backward entry)
	}
	return policy.Computation
}

// severeIn and severeOut are the severe parts of a call's inputs and
// outputs (a collective: what it sent and what it received).
func (s *rankScan) severeIn(ev *event) nonfinite.Class {
	if c := s.collOf(ev); c != nil {
		return c.send
	}
	return policy.Severe(ev.in, s.site(ev)) | policy.Severe(ev.param, policy.Weights)
}

func (s *rankScan) severeOut(ev *event) nonfinite.Class {
	if c := s.collOf(ev); c != nil {
		return c.dest
	}
	return policy.Severe(ev.out, s.site(ev))
}

func (s *rankScan) isSevere(ev *event) bool {
	return ev.flagged || s.severeIn(ev)|s.severeOut(ev) != 0
}

// analyse decides the rank's first sign, root and first NaN from the
// events it kept.
func (s *rankScan) analyse() *local {
	l := &local{}
	for i := range s.events {
		ev := &s.events[i]
		if ev.collIdx < 0 && ev.birth != 0 && !ev.module && len(l.births) < 16 {
			l.births = append(l.births, ev)
		}
		if l.first == nil && s.isSevere(ev) {
			l.first = ev
		}
	}
	if l.first == nil {
		return l
	}
	first := l.first
	l.root = first
	switch c := s.collOf(first); {
	case first.flagged:
		l.role = roleFlagged
	case c != nil && c.send != 0:
		l.role, l.kind = roleSentBad, c.send
	case c != nil:
		l.role, l.kind = roleReceived, c.dest
	default:
		if sin := s.severeIn(first); sin != 0 {
			l.role, l.kind = roleInherited, sin
		} else {
			l.role, l.kind = roleBirth, policy.NewKinds(first.in, s.severeOut(first))
			if l.kind == 0 {
				l.kind = s.severeOut(first) // +inf out of inputs holding only a mask's -inf
			}
		}
		// A NaN (or a gradient -inf) grown from -inf that an earlier call of
		// this rank created, with no mask in between: that call is the origin.
		if first.in == nonfinite.NegInf {
			for j := range s.events {
				w := &s.events[j]
				if w.index >= first.index {
					break
				}
				if w.collIdx < 0 && !w.module && w.birth&nonfinite.NegInf != 0 && w.index > first.legitNeg {
					l.root, l.promoted, l.role, l.kind = w, true, roleBirth, nonfinite.NegInf
					break
				}
			}
		}
	}
	if l.kind&nonfinite.NaN == 0 {
		for j := range s.events {
			ev := &s.events[j]
			if ev.index < l.root.index {
				continue
			}
			out := ev.out
			if c := s.collOf(ev); c != nil {
				out = c.dest
			}
			if out&nonfinite.NaN != 0 {
				l.firstNaN = ev
				break
			}
		}
	}
	return l
}

// kindName is the verdict's word for what a call made.
func kindName(c nonfinite.Class, flagged bool) string {
	if flagged {
		return "overflow"
	}
	return c.Kind()
}
