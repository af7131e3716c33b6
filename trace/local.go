package trace

import "github.com/nanhunt/nanhunt/dump"

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
	first    *event // first call that shows a real anomaly
	root     *event // origin candidate on this rank: first, or a -inf birth before it
	role     role
	kind     dump.Class // what the root's output newly held (or the inputs, when inherited)
	promoted bool       // root is an earlier -inf birth that the anomaly grew from
	firstNaN *event     // first call with NaN output at or after root, when root made Inf
	births   []*event   // calls that made a new kind, in order (candidates)
}

// stage places a call in the step: backward by its name; after the last
// backward call, collectives still belong to the backward (they synchronise
// the gradients) and other calls to the optimizer's update; forward
// otherwise. construct.json, when it tags the update, refines this later.
func (s *rankScan) stage(ev *event) string {
	switch {
	case ev.dir == dump.Backward || ev.dir == dump.ParamGrad:
		return "backward"
	case s.lastBwd >= 0 && ev.index > s.lastBwd && ev.collIdx >= 0:
		return "backward"
	case s.lastBwd >= 0 && ev.index > s.lastBwd:
		return "optimizer"
	}
	return "forward"
}

// sensitive: places where even -inf is never legitimate (gradients, the
// update, weights, collectives).
func (s *rankScan) sensitive(ev *event) bool {
	return s.stage(ev) != "forward" || ev.param&dump.NegInf != 0 || ev.collIdx >= 0
}

// severeOf is the part of a class that is an anomaly at this call.
func (s *rankScan) severeOf(ev *event, c dump.Class) dump.Class {
	if s.sensitive(ev) {
		return c
	}
	return c &^ dump.NegInf
}

func (s *rankScan) isSevere(ev *event) bool {
	if ev.flagged {
		return true
	}
	if c := s.collOf(ev); c != nil {
		return c.send|c.dest != 0
	}
	return s.severeOf(ev, ev.in|ev.out) != 0
}

// analyse decides the rank's role from the events it kept.
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
		if sin := s.severeOf(first, first.in); sin != 0 {
			l.role, l.kind = roleInherited, sin
		} else {
			l.role, l.kind = roleBirth, s.severeOf(first, first.out)
		}
		// A NaN (or a gradient -inf) grown from -inf that an earlier call of
		// this rank created, with no mask in between: that call is the origin.
		nonFinite := first.in
		if nonFinite == dump.NegInf && (l.role == roleBirth || l.kind == dump.NegInf) {
			for j := range s.events {
				w := &s.events[j]
				if w.index >= first.index {
					break
				}
				if w.collIdx < 0 && !w.module && w.birth&dump.NegInf != 0 && w.index > first.legitNeg {
					l.root, l.promoted, l.role, l.kind = w, true, roleBirth, dump.NegInf
					break
				}
			}
		}
	}
	if l.kind&dump.NaN == 0 {
		for j := range s.events {
			ev := &s.events[j]
			if ev.index < l.root.index {
				continue
			}
			out := ev.out
			if c := s.collOf(ev); c != nil {
				out = c.dest
			}
			if out&dump.NaN != 0 {
				l.firstNaN = ev
				break
			}
		}
	}
	return l
}

// kindName is the verdict's word for what a call made.
func kindName(c dump.Class, flagged bool) string {
	switch {
	case flagged:
		return "overflow"
	case c&dump.NaN != 0:
		return "nan"
	case c&dump.Inf != 0:
		return "inf"
	}
	return ""
}

// finish decides the rank's role and drops what the decision does not
// need, so that a step of many ranks stays small in memory: the calls the
// verdict may name, the non-finite collectives (capped), and the counts.
func (s *rankScan) finish() {
	l := s.analyse()
	keep := map[*event]bool{}
	for _, ev := range append([]*event{l.first, l.root, l.firstNaN}, l.births...) {
		if ev != nil {
			keep[ev] = true
		}
	}
	kept := make([]event, 0, len(keep))
	moved := map[*event]*event{}
	for i := range s.events {
		if ev := &s.events[i]; keep[ev] {
			kept = append(kept, *ev)
		}
	}
	for i, j := 0, 0; i < len(s.events); i++ {
		if ev := &s.events[i]; keep[ev] {
			kept[j].suppress = nil
			moved[ev] = &kept[j]
			j++
		}
	}
	re := func(ev *event) *event { return moved[ev] }
	l.first, l.root, l.firstNaN = re(l.first), re(l.root), re(l.firstNaN)
	for i := range l.births {
		l.births[i] = re(l.births[i])
	}
	s.events, s.supIndex, s.local = kept, nil, l
}
