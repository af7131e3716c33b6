package trace

import (
	"errors"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/safeio"
)

// A receive of a point-to-point message runs where its peer's send says
// (README "How it decides", 6.1): in a pipeline's 1F1B schedule a stage
// receives the gradient of a micro-batch while it still runs forwards, so
// its position places the recv in the forward although the tensor it
// receives was made by the peer's backward. The send is the clock: a recv
// that received the value takes the phase of the send it pairs with
// (sender, receiver, k-th message), when that send's side was read.

// p2pFix is a receive whose phase its paired send gave it.
type p2pFix struct {
	rank     int    // the receiver
	op       string // its recv
	fromRank int    // the sender
	fromOp   string // its send
	was      policy.Phase
	phase    policy.Phase
}

// severeSends are the rank's point-to-point sends that sent a severe
// value: the finish places them in their phases, for the receivers.
func (s *rankScan) severeSends() []*event {
	var out []*event
	for i := range s.events {
		ev := &s.events[i]
		if ev.collIdx < 0 || ev.collIdx >= len(s.colls) {
			continue
		}
		if c := &s.colls[ev.collIdx]; c.p2p == 1 && c.peer >= 0 && c.send != 0 {
			out = append(out, ev)
		}
	}
	return out
}

// p2pStages gives each receiver whose first sign is a recv the phase of
// the send it pairs with, and lists the receives it changed.
func (r *stepResult) p2pStages() {
	for _, h := range r.hops {
		if len(h.from) != 1 || h.inferred {
			continue
		}
		ss := r.scans[h.from[0]]
		oc := ss.collByKey(h.key)
		if oc == nil || oc.p2p != 1 || oc.peer < 0 {
			continue
		}
		ph := oc.phase
		if ph == policy.PhaseUnknown {
			ph = phaseAgain(ss, oc)
			oc.phase = ph
		}
		if ph == policy.PhaseUnknown {
			continue
		}
		for _, rk := range h.to {
			l := r.locals[rk]
			c := r.scans[rk].collOf(l.first)
			if l.role != roleReceived || c == nil || c.key != h.key || c.p2p != -1 || l.first.phase == policy.PhaseUnknown {
				continue
			}
			if l.first.phase != ph {
				r.p2p = append(r.p2p, p2pFix{rank: rk, op: l.first.name, fromRank: h.from[0], fromOp: oc.name, was: l.first.phase, phase: ph})
				l.first.phase = ph
			}
		}
	}
}

// phaseAgain places a collective the scan did not place (one read again
// past the collectives it keeps) by reading the rank's dump.json once
// more: every entry placed, the call's phase decided as the scan decides
// it. PhaseUnknown when the file cannot be read again (a joined summary
// without its dump) or changed since.
func phaseAgain(s *rankScan, c *collEvent) policy.Phase {
	f, err := safeio.Open(s.dir.Dump)
	if err != nil {
		return policy.PhaseUnknown
	}
	defer f.Close()
	if id, err := safeio.IdentityOf(f); err != nil || (s.ident != (safeio.Identity{}) && id != s.ident) {
		return policy.PhaseUnknown
	}
	sc := newScanner(policy.Default(), nil)
	again := newRankScan(s.dir)
	rd := dump.NewReader(f, dump.ReaderOptions{WindowSize: windowFor(s.bytes), Indent: s.indent, Select: func(string, int64) bool { return false }})
	for rd.Next() {
		e := rd.Entry()
		again.place(sc, e, dump.ParseName(e.Name))
	}
	var fe *dump.FormatError
	if err := rd.Err(); err != nil {
		if !errors.As(err, &fe) {
			return policy.PhaseUnknown
		}
		again.damage = &damageAt{Offset: fe.Offset, Text: fe.Error()}
	}
	n := dump.ParseName(c.name)
	ev := &event{index: c.index, name: c.name, dir: passOf(n), module: n.Module, collIdx: 0}
	sc.phases(again, []*event{ev})
	return ev.phase
}
