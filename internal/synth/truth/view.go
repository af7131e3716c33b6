package truth

// A step's view is what its dump shows, as the README's rules read it,
// built from what the simulation recorded rather than from the files: the
// collective instances, their participants and the phases are the
// simulation's own, the legitimacy of a non-finite value is physical, and
// the damage of the spec decides which entries are read.

// readStatus is how much of a rank's dump.json can be read.
type readStatus uint8

const (
	readWhole readStatus = iota
	readDamaged
	readNone
)

// vSign is how a rank first shows the anomaly in a step.
type vSign struct {
	first, root    *seenEntry
	role, rootRole string // sent, received, inherited or birth
	kind           string
	promoted       bool
}

// rankView is one rank's readable entries of one step.
type rankView struct {
	rank    int
	status  readStatus
	cut     int64 // entries ending after it are not read (-1: none cut)
	entries []*seenEntry
	insts   map[instID]*seenEntry
	clocks  map[Clock][]*seenEntry
	sign    *vSign
}

// stepView is every rank of a dumped step.
type stepView struct {
	step  int
	ranks []*rankView
}

// newRankView makes the view of a rank's record, cut at cut bytes (-1
// for none); unread makes a rank whose dump.json cannot be read at all;
// placeable tells that stack.json or construct.json can place an entry in
// the optimizer, stack that stack.json is there.
func newRankView(rank int, l *Log, cut int64, unread, placeable, stack bool) *rankView {
	v := &rankView{rank: rank, cut: cut, insts: map[instID]*seenEntry{}, clocks: map[Clock][]*seenEntry{}}
	switch {
	case unread || l == nil || l.total == 0 || (cut >= 0 && cut < l.firstEnd):
		v.status = readNone
		return v
	case cut >= 0:
		v.status = readDamaged
	}
	for i := range l.entries {
		e := &l.entries[i]
		if cut >= 0 && e.end > cut {
			break
		}
		v.entries = append(v.entries, e)
		if e.coll != nil {
			if _, dup := v.insts[e.coll.inst]; !dup {
				v.insts[e.coll.inst] = e
			}
			v.clocks[e.coll.inst.clock] = append(v.clocks[e.coll.inst.clock], e)
		}
	}
	v.phases(l, placeable, stack)
	v.sign = v.firstSign()
	return v
}

func (v *rankView) read() bool { return v.status != readNone }

// phases gives every entry read the phase README 4 gives it from what the
// dump shows (e.ph); the simulation's own phase stays in e.phys. They
// differ where the dump cannot tell: in a file without backward entries
// everything before the optimizer is forward (rule 3), and between the
// first and the last backward entry a forward-named call whose op also ran
// before the backward and whose stack has no backward frame is forward
// (rule 5), which a pipeline's receive of a gradient is.
func (v *rankView) phases(l *Log, placeable, stack bool) {
	seen := func(end int64) bool { return end >= 0 && (v.cut < 0 || end <= v.cut) }
	optAt := -1
	if placeable && l.firstOpt >= 0 && seen(l.firstOptEnd) {
		optAt = l.firstOpt
	}
	if !seen(l.firstBwdEnd) {
		for _, e := range v.entries {
			switch {
			case optAt >= 0 && e.pos >= optAt:
				e.ph = PhaseOptimizer
			case stack && e.bwdFrame: // rule 3: a kernel a backward calls
				e.ph = PhaseBackward
			default:
				e.ph = PhaseForward
			}
		}
		return
	}
	b1, b2 := l.firstBwd, l.lastBwd
	if v.cut >= 0 {
		// README 4: in a file cut short nothing lies after B2
		b2 = int(^uint(0) >> 1)
	}
	start := optAt
	if start < 0 {
		start = b2 + 1
		for _, e := range v.entries {
			if e.coll != nil && e.pos > b2 {
				start = e.pos + 1
			}
		}
	}
	for _, e := range v.entries {
		switch {
		case e.kind == EntryBackward || e.kind == EntryParamsGrad:
			e.ph = PhaseBackward
		case e.pos > b2 && e.pos >= start:
			e.ph = PhaseOptimizer
		case e.pos > b2:
			e.ph = PhaseSync
		case e.pos < b1:
			e.ph = PhaseForward
		case stack && e.bwdFrame:
			e.ph = PhaseBackward
		case l.before[e.op]:
			e.ph = PhaseForward
		default:
			e.ph = PhaseBackward
		}
	}
}

// afterB2 reports an entry after the last backward entry of a whole file.
func (v *rankView) afterB2(e *seenEntry) bool {
	return v.cut < 0 && e.afterBwd && e.nextBwd < 0 // a cut file has nothing after B2
}

// severe is the part of h that is severe at e (README 5): NaN and +inf
// always, -inf in backward entries and after B2.
func (v *rankView) severe(e *seenEntry, h Holds) Holds {
	s := h &^ HoldsNInf
	if h.has(HoldsNInf) && (e.kind == EntryBackward || e.kind == EntryParamsGrad || v.afterB2(e)) {
		s |= HoldsNInf
	}
	return s
}

func (v *rankView) severeIn(e *seenEntry) Holds { return v.severe(e, e.in) | e.inParams }

func (v *rankView) severeOut(e *seenEntry) Holds { return v.severe(e, e.out) }

// firstSign walks the entries in file order (README 5).
func (v *rankView) firstSign() *vSign {
	for i, e := range v.entries {
		s := &vSign{first: e, root: e}
		switch {
		case e.coll != nil && e.coll.send != 0:
			s.role, s.kind = "sent", e.coll.send.kind()
		case e.coll != nil && e.coll.recv != 0:
			s.role, s.kind = "received", e.coll.recv.kind()
		case e.coll != nil:
			continue
		case v.severeIn(e) != 0:
			s.role, s.kind = "inherited", v.severeIn(e).kind()
		case v.severeOut(e) != 0:
			s.role, s.kind = "birth", v.severeOut(e).kind()
		default:
			continue
		}
		s.rootRole = s.role
		if (s.role == "birth" || s.role == "inherited") && e.in&^HoldsNInf == 0 && e.inNeg {
			v.promote(s, i)
		}
		return s
	}
	return nil
}

// promote: the first entry before the first sign, after the last
// legitimate -inf source, that made a new -inf is the root.
func (v *rankView) promote(s *vSign, at int) {
	from := 0
	for i := 0; i < at; i++ {
		if v.entries[i].legitNeg {
			from = i + 1
		}
	}
	for _, e := range v.entries[from:at] {
		if e.coll == nil && e.kind != EntryModule && e.out.has(HoldsNInf) && !e.inNeg {
			s.root, s.rootRole, s.kind, s.promoted = e, "birth", "inf", true
			return
		}
	}
}

// firstNaNFrom is the first entry at or after position pos whose output
// holds NaN (a collective: that received NaN).
func (v *rankView) firstNaNFrom(pos int) *seenEntry {
	for _, e := range v.entries {
		if e.pos < pos {
			continue
		}
		if e.coll != nil {
			if e.coll.recv.has(HoldsNaN) {
				return e
			}
			continue
		}
		if e.out.has(HoldsNaN) {
			return e
		}
	}
	return nil
}
