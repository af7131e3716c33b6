package trace

// finish decides the rank's account of the step and drops what the
// decision does not need, so that a step of many ranks stays small in
// memory: the calls the verdict may name, placed in their phases, the
// non-finite collectives (capped), the first sign's place among the
// collectives, and the counts.
func (sc *scanner) finish(s *rankScan, mode scanMode) {
	l := s.analyse()
	named := []*event{l.first, l.root, l.firstNaN}
	named = append(named, l.births...)
	keep := map[*event]bool{}
	var evs []*event
	for _, ev := range named {
		if ev != nil && !keep[ev] {
			keep[ev] = true
			evs = append(evs, ev)
		}
	}
	sends := s.severeSends()
	if !s.stopped && len(evs)+len(sends) > 0 {
		sc.phases(s, append(evs, sends...))
		for _, ev := range sends {
			s.colls[ev.collIdx].phase = ev.phase
		}
	}
	if l.first != nil {
		s.summarise(l.first.index)
	}
	if s.damage != nil {
		s.seen = s.seenCounts()
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
	s.syncs, s.tail, s.preOps = nil, nil, nil
}
